import Foundation
import HistoryStore

/// Everything `history-server` can be told, each setting with its default.
///
/// Read from environment variables first, then from flags, so a flag wins:
/// a deployment sets the environment, a person at a terminal overrides it.
/// Parsed by hand (the server takes no argument-parser dependency) but
/// explained in argument-parser's `USAGE:` / `OPTIONS:` shape.
///
/// ```swift
/// switch try ServerConfiguration.parse(arguments: ["--port", "0"], environment: [:]) {
/// case .run(let configuration): ...
/// case .help: print(ServerConfiguration.usage)
/// }
/// ```
public struct ServerConfiguration: Sendable, Hashable {
    public var host: String
    /// 0 asks the system for any free port.
    public var port: Int
    public var databasePath: String
    public var durability: Durability
    public var maximumConnections: Int
    public var logLevel: LogLevel
    public var accessLog: Bool

    // MARK: Identity and access

    /// A file holding the HS256 shared secret; with any ES256 key, tokens mode.
    public var jwtHS256SecretFile: String?
    /// ES256 public keys (PEM files), chosen by the token's `kid`.
    public var jwtES256PublicKeys: [PublicKeyFile]
    /// When set, a token's `aud` must name it.
    public var jwtAudience: String?
    /// When set, a token's `iss` must be it.
    public var jwtIssuer: String?
    /// Open mode on a non-loopback bind (a warning at start).
    public var insecureNoAuth: Bool
    /// `Host` names a loopback bind answers beyond localhost, 127.0.0.1 and [::1].
    public var allowedHosts: [String]
    /// Origins that get CORS headers and preflight answers.
    public var corsOrigins: [String]

    /// One `--jwt-es256-public-key KID=PATH`.
    public struct PublicKeyFile: Hashable, Sendable {
        public var kid: String
        public var path: String

        public init(kid: String, path: String) {
            self.kid = kid
            self.path = path
        }

        /// `KID=PATH`, both non-empty; nil otherwise.
        public init?(argument: String) {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex,
                  argument.index(after: equals) != argument.endIndex else { return nil }
            self.init(kid: String(argument[..<equals]), path: String(argument[argument.index(after: equals)...]))
        }
    }

    public init(host: String = "127.0.0.1", port: Int = 8080, databasePath: String = "./data/history.sqlite",
                durability: Durability = .full, maximumConnections: Int = 10_000, logLevel: LogLevel = .info,
                accessLog: Bool = true, jwtHS256SecretFile: String? = nil, jwtES256PublicKeys: [PublicKeyFile] = [],
                jwtAudience: String? = nil, jwtIssuer: String? = nil, insecureNoAuth: Bool = false,
                allowedHosts: [String] = [], corsOrigins: [String] = []) {
        self.jwtHS256SecretFile = jwtHS256SecretFile
        self.jwtES256PublicKeys = jwtES256PublicKeys
        self.jwtAudience = jwtAudience
        self.jwtIssuer = jwtIssuer
        self.insecureNoAuth = insecureNoAuth
        self.allowedHosts = allowedHosts
        self.corsOrigins = corsOrigins
        self.host = host
        self.port = port
        self.databasePath = databasePath
        self.durability = durability
        self.maximumConnections = maximumConnections
        self.logLevel = logLevel
        self.accessLog = accessLog
    }

    /// What the command line asks for.
    public enum Command: Hashable, Sendable {
        case run(ServerConfiguration)
        case help
    }

    public static let usage = """
        OVERVIEW: Serves chat history (API v1) over HTTP/1.1 from a SQLite file.

        USAGE: history-server [--host <host>] [--port <port>] [--database <path>] [--durability <durability>]
                              [--max-connections <count>] [--log-level <level>] [--access-log <on|off>]
                              [--jwt-hs256-secret-file <path>] [--jwt-es256-public-key <kid=path> ...]
                              [--jwt-audience <aud>] [--jwt-issuer <iss>] [--insecure-no-auth]
                              [--allowed-host <name> ...] [--cors-origin <origin> ...]

        OPTIONS:
          --host <host>           The address to listen on, an IPv4 or IPv6 literal or localhost.
                                  (env: HISTORY_HOST, default: 127.0.0.1)
          --port <port>           The TCP port, 0 for any free port (the start-up line says which).
                                  (env: HISTORY_PORT, default: 8080)
          --database <path>       The SQLite file; created with its folder when missing.
                                  (env: HISTORY_DATABASE, default: ./data/history.sqlite)
          --durability <durability>
                                  full: an answered write survives power loss; normal: it survives a
                                  crash of the process. (env: HISTORY_DURABILITY, values: full, normal,
                                  default: full)
          --max-connections <count>
                                  Past this many open connections a new one gets 503 and is closed.
                                  (env: HISTORY_MAX_CONNECTIONS, default: 10000)
          --log-level <level>     debug, info, warning or error; messages go to stderr.
                                  (env: HISTORY_LOG_LEVEL, default: info)
          --access-log <on|off>   One line per request on stdout: method, path, status, bytes,
                                  microseconds. (env: HISTORY_ACCESS_LOG, default: on)
          --jwt-hs256-secret-file <path>
                                  A file holding the HS256 secret tokens are signed with; with any key
                                  every /v1 request needs a bearer token. (env: HISTORY_JWT_HS256_SECRET_FILE)
          --jwt-es256-public-key <kid=path>
                                  An ES256 public key (PEM) for tokens whose kid is <kid>; repeatable.
                                  (env: HISTORY_JWT_ES256_PUBLIC_KEY, comma-separated)
          --jwt-audience <aud>    Tokens must carry this aud. (env: HISTORY_JWT_AUDIENCE)
          --jwt-issuer <iss>      Tokens must carry this iss. (env: HISTORY_JWT_ISSUER)
          --insecure-no-auth      Serve without tokens on a non-loopback --host (every request is an
                                  administrator). (env: HISTORY_INSECURE_NO_AUTH=on)
          --allowed-host <name>   A Host name a loopback bind answers besides localhost, 127.0.0.1 and
                                  [::1]; repeatable. (env: HISTORY_ALLOWED_HOST, comma-separated)
          --cors-origin <origin>  An origin (https://app.example) that gets CORS headers; repeatable.
                                  (env: HISTORY_CORS_ORIGIN, comma-separated)
          -h, --help              Show help information.

        """

    private struct Option: Sendable {
        var flag: String
        var variable: String
        /// Given more than once, each value counts; its variable is a comma-separated list.
        var repeatable = false
        /// Takes no value (`--insecure-no-auth`); its variable is on/off.
        var isSwitch = false
        var apply: @Sendable (inout ServerConfiguration, String) throws(ConfigurationError) -> Void
    }

    private static let options: [Option] = [
        Option(flag: "--host", variable: "HISTORY_HOST") { configuration, value throws(ConfigurationError) in
            guard !value.isEmpty else { throw ConfigurationError("--host must not be empty") }
            configuration.host = value
        },
        Option(flag: "--port", variable: "HISTORY_PORT") { configuration, value throws(ConfigurationError) in
            guard let port = Int(value), (0...65_535).contains(port), value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                throw ConfigurationError("--port must be an integer from 0 to 65535, not '\(value)'")
            }
            configuration.port = port
        },
        Option(flag: "--database", variable: "HISTORY_DATABASE") { configuration, value throws(ConfigurationError) in
            guard !value.isEmpty else { throw ConfigurationError("--database must not be empty") }
            configuration.databasePath = value
        },
        Option(flag: "--durability", variable: "HISTORY_DURABILITY") { configuration, value throws(ConfigurationError) in
            guard let durability = Durability(rawValue: value.lowercased()) else {
                throw ConfigurationError("--durability must be full or normal, not '\(value)'")
            }
            configuration.durability = durability
        },
        Option(flag: "--max-connections", variable: "HISTORY_MAX_CONNECTIONS") { configuration, value throws(ConfigurationError) in
            guard let count = Int(value), count >= 1, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                throw ConfigurationError("--max-connections must be a positive integer, not '\(value)'")
            }
            configuration.maximumConnections = count
        },
        Option(flag: "--log-level", variable: "HISTORY_LOG_LEVEL") { configuration, value throws(ConfigurationError) in
            guard let level = LogLevel(name: value) else {
                throw ConfigurationError("--log-level must be debug, info, warning or error, not '\(value)'")
            }
            configuration.logLevel = level
        },
        Option(flag: "--access-log", variable: "HISTORY_ACCESS_LOG") { configuration, value throws(ConfigurationError) in
            switch value.lowercased() {
            case "on", "true", "1", "yes": configuration.accessLog = true
            case "off", "false", "0", "no": configuration.accessLog = false
            default: throw ConfigurationError("--access-log must be on or off, not '\(value)'")
            }
        },
        Option(flag: "--jwt-hs256-secret-file", variable: "HISTORY_JWT_HS256_SECRET_FILE") { configuration, value throws(ConfigurationError) in
            guard !value.isEmpty else { throw ConfigurationError("--jwt-hs256-secret-file must not be empty") }
            configuration.jwtHS256SecretFile = value
        },
        Option(flag: "--jwt-es256-public-key", variable: "HISTORY_JWT_ES256_PUBLIC_KEY", repeatable: true) { configuration, value throws(ConfigurationError) in
            guard let key = PublicKeyFile(argument: value) else {
                throw ConfigurationError("--jwt-es256-public-key must be KID=PATH, not '\(value)'")
            }
            configuration.jwtES256PublicKeys.append(key)
        },
        Option(flag: "--jwt-audience", variable: "HISTORY_JWT_AUDIENCE") { configuration, value throws(ConfigurationError) in
            guard !value.isEmpty else { throw ConfigurationError("--jwt-audience must not be empty") }
            configuration.jwtAudience = value
        },
        Option(flag: "--jwt-issuer", variable: "HISTORY_JWT_ISSUER") { configuration, value throws(ConfigurationError) in
            guard !value.isEmpty else { throw ConfigurationError("--jwt-issuer must not be empty") }
            configuration.jwtIssuer = value
        },
        Option(flag: "--insecure-no-auth", variable: "HISTORY_INSECURE_NO_AUTH", isSwitch: true) { configuration, value throws(ConfigurationError) in
            switch value.lowercased() {
            case "on", "true", "1", "yes": configuration.insecureNoAuth = true
            case "off", "false", "0", "no", "": configuration.insecureNoAuth = false
            default: throw ConfigurationError("--insecure-no-auth must be on or off, not '\(value)'")
            }
        },
        Option(flag: "--allowed-host", variable: "HISTORY_ALLOWED_HOST", repeatable: true) { configuration, value throws(ConfigurationError) in
            guard !value.isEmpty, !value.contains(where: { $0 == " " || $0 == "/" }) else {
                throw ConfigurationError("--allowed-host must be a host name, not '\(value)'")
            }
            configuration.allowedHosts.append(value)
        },
        Option(flag: "--cors-origin", variable: "HISTORY_CORS_ORIGIN", repeatable: true) { configuration, value throws(ConfigurationError) in
            guard value.hasPrefix("http://") || value.hasPrefix("https://"), !value.hasSuffix("/") else {
                throw ConfigurationError("--cors-origin must be an origin such as https://app.example, not '\(value)'")
            }
            configuration.corsOrigins.append(value)
        },
    ]

    /// Reads `arguments` (without the program name) and `environment`; a
    /// flag wins over its variable, and a variable a flag overrides is not
    /// even checked (a stale bad value must not stop a corrected start).
    /// - Throws: `ConfigurationError` naming the flag or variable and what it takes.
    public static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Command {
        var given: [(option: Option, value: String)] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { return .help }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = options.first(where: { $0.flag == name }) else {
                throw ConfigurationError(argument.hasPrefix("-") ? "unknown option '\(name)'" : "unexpected argument '\(argument)'")
            }
            if option.isSwitch {
                given.append((option, inlineValue ?? "on"))
            } else if let inlineValue {
                given.append((option, inlineValue))
            } else {
                guard index < arguments.count else { throw ConfigurationError("\(name) needs a value") }
                given.append((option, arguments[index]))
                index += 1
            }
        }
        var configuration = ServerConfiguration()
        for option in options where !given.contains(where: { $0.option.flag == option.flag }) {
            guard let value = environment[option.variable] else { continue }
            do {
                let values = option.repeatable ? value.split(separator: ",").map { String($0) } : [value]
                for value in values { try option.apply(&configuration, value) }
            } catch {
                throw ConfigurationError(error.message.replacingFirst(option.flag, with: option.variable))
            }
        }
        for (option, value) in given {
            try option.apply(&configuration, value)
        }
        return .run(configuration)
    }
}

/// A flag or environment value the server cannot use; printed with a hint, exit status 2.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
