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

    public init(host: String = "127.0.0.1", port: Int = 8080, databasePath: String = "./data/history.sqlite",
                durability: Durability = .full, maximumConnections: Int = 10_000, logLevel: LogLevel = .info,
                accessLog: Bool = true) {
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
          -h, --help              Show help information.

        """

    private struct Option: Sendable {
        var flag: String
        var variable: String
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
            if let inlineValue {
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
                try option.apply(&configuration, value)
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
