import HTTPCore
import HistoryAPI
import HistoryAccess
import HistoryStore
import HistorySQLite

/// Everything a `HistoryApplication` is built from, each setting with its default.
///
/// A plain value: `history-server` fills it from its flags and environment
/// variables (see `ServerOptions` there), tests build it directly.
public struct ServerConfiguration: Sendable, Hashable {
    public var host: String
    /// 0 asks the system for any free port.
    public var port: Int
    public var databasePath: String
    public var durability: SQLiteDurability
    public var maximumConnections: Int
    public var logLevel: LogLevel
    public var accessLog: Bool

    // MARK: Identity and access

    /// A file of HS256 shared secrets (`KID SECRET` lines); with any ES256
    /// key, it turns tokens mode on.
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
    /// Proxies whose `X-Forwarded-For` (or `Forwarded`) is believed: the
    /// client behind them is who limits and the access log count
    /// (`ClientAddressing`); their connections are not capped per peer.
    public var trustedProxies: [IPNetwork] = []

    // MARK: Limits

    /// The most bytes of JSON in one page or feed answer.
    public var maximumResponseBytes: Int
    /// Reads a second per client; 0 disables; nil: the mode's default (see `clientLimits(tokensMode:)`).
    public var rateLimitReads: Int?
    /// Writes a second per client; 0 disables; nil: the mode's default.
    public var rateLimitWrites: Int?
    /// The burst of both buckets; nil: twice each rate.
    public var rateLimitBurst: Int?
    /// Long-polls one client may have parked at once.
    public var maximumParkedPollsPerClient: Int
    /// Open connections one peer address may hold; 0: no limit (behind a
    /// proxy that limits connections itself).
    public var maximumConnectionsPerClient: Int
    /// How long a connection's oldest unread answer may wait before the
    /// connection is closed; reading part of it does not extend the time.
    public var writeTimeout: Duration
    /// The store's read connections, and so the read pool's threads; nil:
    /// the store's own default (4 for SQLite, 8 for PostgreSQL, where each
    /// is a server session counted against its `max_connections`).
    public var readConnections: Int?

    /// The newest pages kept as sent, at most, in bytes
    /// (`--newest-page-cache-mib`); 0 keeps none.
    public var newestPageCacheBytes = APIResponder.defaultNewestPageCacheBytes

    /// What `--newest-page-cache-mib` accepts.
    public static let newestPageCacheMiBRange = 0...65_536

    /// Whether `/` serves the web viewer (`WebViewer`); off, `/` is 404.
    public var webViewer = true

    // MARK: Live feeds

    /// A stream ends by itself after this long (`--max-stream-seconds`).
    public var maximumStreamDuration: Duration = .seconds(FeedSettings.defaultMaximumStreamSeconds)
    /// More changes than this after `since`: a feed answers `reset` (`--feed-reset-after`).
    public var feedResetAfter = FeedSettings.defaultResetAfter

    /// A comment line on a stream after this much silence; no flag (the
    /// contract says 20 s), tests shorten it.
    public var streamHeartbeatInterval: Duration = .seconds(20)

    /// The live feeds' settings, as the API layer takes them.
    public var feedSettings: FeedSettings {
        FeedSettings(maximumStreamDuration: maximumStreamDuration, heartbeatInterval: streamHeartbeatInterval,
                     resetAfter: feedResetAfter)
    }

    /// What `--read-connections` accepts.
    public static let readConnectionsRange = 1...256

    /// The contract's default of `--max-connections-per-client`.
    public static let defaultMaximumConnectionsPerClient = 256

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
                durability: SQLiteDurability = .full, maximumConnections: Int = 10_000, logLevel: LogLevel = .info,
                accessLog: Bool = true, jwtHS256SecretFile: String? = nil, jwtES256PublicKeys: [PublicKeyFile] = [],
                jwtAudience: String? = nil, jwtIssuer: String? = nil, insecureNoAuth: Bool = false,
                allowedHosts: [String] = [], corsOrigins: [String] = [],
                maximumResponseBytes: Int = ClientLimits.defaultMaximumResponseBytes, rateLimitReads: Int? = nil,
                rateLimitWrites: Int? = nil, rateLimitBurst: Int? = nil,
                maximumParkedPollsPerClient: Int = ClientLimits.defaultMaximumParkedPollsPerClient,
                maximumConnectionsPerClient: Int = ServerConfiguration.defaultMaximumConnectionsPerClient,
                writeTimeout: Duration = HTTPLimits().writeTimeout) {
        self.writeTimeout = writeTimeout
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
        self.maximumResponseBytes = maximumResponseBytes
        self.rateLimitReads = rateLimitReads
        self.rateLimitWrites = rateLimitWrites
        self.rateLimitBurst = rateLimitBurst
        self.maximumParkedPollsPerClient = maximumParkedPollsPerClient
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
}

extension ServerConfiguration {
    /// `databasePath` as logs may show it: a PostgreSQL URI's password
    /// (`user:secret@`, `password=secret`) replaced by `***`.
    public var displayedDatabase: String {
        Self.redactingPassword(databasePath)
    }

    static func redactingPassword(_ database: String) -> String {
        guard database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") else { return database }
        var text = database
        // After "postgres://" or "postgresql://".
        let schemeEnd = text.index(text.firstIndex(of: ":")!, offsetBy: 3)
        let authorityEnd = text[schemeEnd...].firstIndex(where: { $0 == "/" || $0 == "?" }) ?? text.endIndex
        if let at = text[schemeEnd..<authorityEnd].lastIndex(of: "@"),
           let colon = text[schemeEnd..<at].firstIndex(of: ":") {
            text.replaceSubrange(text.index(after: colon)..<at, with: "***")
        }
        if let query = text.firstIndex(of: "?") {
            let pairs = text[text.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { pair in
                pair.lowercased().hasPrefix("password=") ? "password=***" : String(pair)
            }
            text = String(text[...query]) + pairs.joined(separator: "&")
        }
        return text
    }
}
