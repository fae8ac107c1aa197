import ArgumentParser
import HTTPCore
import HistoryAPI
import HistoryAccess
import HistoryStore
import HistorySQLite
import HistoryWiring

/// The flags of `history-server`, each also read from an environment variable:
/// a deployment sets the environment, a person at a terminal overrides it.
///
/// **Where flags go.** A new flag is one optional `@Option` below, with
/// `.setting(...)` as its help (which names its variable and its default, so
/// `--help` is the whole documentation), read in `configuration(environment:)`
/// by one `environment.override(...)` line into its `ServerConfiguration`
/// field. The variable is `HISTORY_` and the flag's name in capitals.
///
/// Each option is optional on purpose: nil means "not on the command line",
/// which is when its variable applies; a variable whose flag is given is not
/// even read, so a stale bad value cannot stop a corrected start. Defaults
/// therefore live in `ServerConfiguration.init`, and the help quotes them
/// from there.
struct ServerOptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history-server",
        abstract: "Serves chat history (API v1) over HTTP/1.1 from a SQLite file or a PostgreSQL database (--database).",
        version: HistoryApplication.version
    )

    private static let defaults = ServerConfiguration()

    @Option(help: .setting("The address to listen on, an IPv4 or IPv6 literal or localhost.",
                           variable: "HISTORY_HOST", default: ServerOptions.defaults.host),
            transform: SettingValue.nonEmpty)
    var host: String?

    @Option(help: .setting("The TCP port, 0 for any free port (the start-up line says which).",
                           variable: "HISTORY_PORT", default: "\(ServerOptions.defaults.port)"),
            transform: SettingValue.port)
    var port: Int?

    @Option(help: .setting("The SQLite file, created with its folder when missing; or a PostgreSQL database as a libpq URI (postgres://... or postgresql://...), which several instances may share.",
                           variable: "HISTORY_DATABASE", default: ServerOptions.defaults.databasePath, valueName: "path-or-uri"),
            transform: SettingValue.nonEmpty)
    var database: String?

    @Option(help: .setting("full: an answered write survives power loss; normal: it survives a crash of the process.",
                           variable: "HISTORY_DURABILITY", default: ServerOptions.defaults.durability.rawValue),
            transform: SettingValue.durability)
    var durability: SQLiteDurability?

    @Option(help: .setting("Past this many open connections a new one gets 503 and is closed.",
                           variable: "HISTORY_MAX_CONNECTIONS", default: "\(ServerOptions.defaults.maximumConnections)",
                           valueName: "count"),
            transform: SettingValue.positiveCount)
    var maxConnections: Int?

    @Option(help: .setting("debug, info, warning or error; messages go to stderr.",
                           variable: "HISTORY_LOG_LEVEL", default: ServerOptions.defaults.logLevel.name, valueName: "level"),
            transform: SettingValue.logLevel)
    var logLevel: LogLevel?

    @Option(help: .setting("One line per request on stdout: method, path, status, bytes, microseconds, client address.",
                           variable: "HISTORY_ACCESS_LOG", default: SettingValue.onOffName(ServerOptions.defaults.accessLog),
                           valueName: "on|off"),
            transform: SettingValue.onOff)
    var accessLog: Bool?

    @Option(name: .customLong("web-viewer"),
            help: .setting("The web app for people at / (inbox and conversations, on this API); off: / is 404.",
                           variable: "HISTORY_WEB_VIEWER", default: SettingValue.onOffName(ServerOptions.defaults.webViewer),
                           valueName: "on|off"),
            transform: SettingValue.onOff)
    var webViewer: Bool?

    // MARK: Identity and access

    @Option(name: .customLong("jwt-hs256-secret-file"),
            help: .setting("A file of HS256 secrets, one 'KID SECRET' line each (32 bytes or more); with any key, "
                           + "every /v1 request needs a bearer token.",
                           variable: "HISTORY_JWT_HS256_SECRET_FILE", default: "none", valueName: "path"),
            transform: SettingValue.nonEmpty)
    var jwtHS256SecretFile: String?

    @Option(name: .customLong("jwt-es256-public-key"),
            help: .setting("An ES256 public key (PEM file) for tokens whose kid is KID; repeatable.",
                           variable: "HISTORY_JWT_ES256_PUBLIC_KEY, comma-separated", default: "none", valueName: "kid=path"),
            transform: SettingValue.publicKeyFile)
    var jwtES256PublicKeys: [ServerConfiguration.PublicKeyFile] = []

    @Option(name: .customLong("jwt-audience"),
            help: .setting("Tokens must carry this aud.", variable: "HISTORY_JWT_AUDIENCE", default: "not checked",
                           valueName: "aud"),
            transform: SettingValue.nonEmpty)
    var jwtAudience: String?

    @Option(name: .customLong("jwt-issuer"),
            help: .setting("Tokens must carry this iss.", variable: "HISTORY_JWT_ISSUER", default: "not checked",
                           valueName: "iss"),
            transform: SettingValue.nonEmpty)
    var jwtIssuer: String?

    @Flag(name: .customLong("insecure-no-auth"),
          help: .setting("Serve without tokens on a non-loopback --host: every request acts as an administrator.",
                         variable: "HISTORY_INSECURE_NO_AUTH=on", default: "off"))
    var insecureNoAuth = false

    @Option(name: .customLong("allowed-host"),
            help: .setting("A Host name a loopback bind answers besides localhost, 127.0.0.1 and [::1]; repeatable.",
                           variable: "HISTORY_ALLOWED_HOST, comma-separated", default: "none", valueName: "name"),
            transform: SettingValue.hostName)
    var allowedHosts: [String] = []

    @Option(name: .customLong("cors-origin"),
            help: .setting("An origin (https://app.example) whose pages may call the API: it gets CORS headers; repeatable.",
                           variable: "HISTORY_CORS_ORIGIN, comma-separated", default: "none", valueName: "origin"),
            transform: SettingValue.origin)
    var corsOrigins: [String] = []

    @Option(name: .customLong("trusted-proxy"),
            help: .setting("A proxy (address or CIDR block) whose X-Forwarded-For or Forwarded names the client for "
                           + "limits, rate limits and the access log; from any other peer those headers are ignored; repeatable.",
                           variable: "HISTORY_TRUSTED_PROXY, comma-separated", default: "none", valueName: "cidr"),
            transform: SettingValue.network)
    var trustedProxies: [IPNetwork] = []

    // MARK: Limits

    @Option(name: .customLong("max-response-bytes"),
            help: .setting("The most bytes of JSON in one page or events answer; a larger page stops early "
                           + "(at least one message) with has_older/has_newer/has_more exact.",
                           variable: "HISTORY_MAX_RESPONSE_BYTES",
                           default: "\(ServerOptions.defaults.maximumResponseBytes) (1 MiB)", valueName: "bytes"),
            transform: SettingValue.responseBytes)
    var maxResponseBytes: Int?

    @Option(name: .customLong("rate-limit-reads"),
            help: .setting("Reads a second per client (token sub, else peer address); 0 disables; admin tokens exempt.",
                           variable: "HISTORY_RATE_LIMIT_READS",
                           default: "\(RateLimit.defaultReads.perSecond) in tokens mode, off in open mode",
                           valueName: "per-second"),
            transform: SettingValue.count)
    var rateLimitReads: Int?

    @Option(name: .customLong("rate-limit-writes"),
            help: .setting("Writes (new conversations, posts, edits, deletes, member changes) a second per client; "
                           + "0 disables; admin tokens exempt.",
                           variable: "HISTORY_RATE_LIMIT_WRITES",
                           default: "\(RateLimit.defaultWrites.perSecond) in tokens mode, off in open mode",
                           valueName: "per-second"),
            transform: SettingValue.count)
    var rateLimitWrites: Int?

    @Option(name: .customLong("rate-limit-burst"),
            help: .setting("How many requests a client may make at once after a pause, for reads and writes alike.",
                           variable: "HISTORY_RATE_LIMIT_BURST", default: "twice each rate", valueName: "count"),
            transform: SettingValue.positiveCount)
    var rateLimitBurst: Int?

    @Option(name: .customLong("max-parked-polls-per-client"),
            help: .setting("Long-polls one client may have waiting at once; past it 429 too_many_requests.",
                           variable: "HISTORY_MAX_PARKED_POLLS_PER_CLIENT",
                           default: "\(ServerOptions.defaults.maximumParkedPollsPerClient)", valueName: "count"),
            transform: SettingValue.positiveCount)
    var maxParkedPollsPerClient: Int?

    @Option(help: .setting("Open connections one peer address may hold; past it 503 too_many_connections; 0: no limit (behind a proxy that limits connections itself).",
                           variable: "HISTORY_MAX_CONNECTIONS_PER_CLIENT",
                           default: "\(ServerOptions.defaults.maximumConnectionsPerClient)", valueName: "count"),
            transform: SettingValue.count)
    var maxConnectionsPerClient: Int?

    @Option(name: .customLong("write-timeout"),
            help: .setting("A connection whose oldest unread answer is not read whole this long after it was ready "
                           + "is closed; reading a trickle of it does not extend the time.",
                           variable: "HISTORY_WRITE_TIMEOUT",
                           default: "\(ServerOptions.defaults.writeTimeout.components.seconds)", valueName: "seconds"),
            transform: SettingValue.seconds)
    var writeTimeout: Duration?

    @Option(name: .customLong("read-connections"),
            help: .setting("The store's read connections, also how many server threads may block in a read at "
                           + "once (1 to 256); for PostgreSQL each is a session counted against its max_connections.",
                           variable: "HISTORY_READ_CONNECTIONS",
                           default: "one per CPU the process may use (at least 2) for SQLite, 8 for PostgreSQL",
                           valueName: "count"),
            transform: SettingValue.readConnections)
    var readConnections: Int?

    @Option(name: .customLong("newest-page-cache-mib"),
            help: .setting("Newest pages kept as sent (JSON or gzip), in MiB in all: a chat screen's open answered "
                           + "without encoding, on SQLite without reading; 0 keeps none.",
                           variable: "HISTORY_NEWEST_PAGE_CACHE_MIB",
                           default: "\(ServerOptions.defaults.newestPageCacheBytes >> 20)", valueName: "MiB"),
            transform: SettingValue.newestPageCacheBytes)
    var newestPageCacheBytes: Int?

    @Option(name: .customLong("max-stream-seconds"),
            help: .setting("An event stream (Accept: text/event-stream) ends by itself after this long, "
                           + "so proxies and clients reconnect with Last-Event-ID.",
                           variable: "HISTORY_MAX_STREAM_SECONDS",
                           default: "\(FeedSettings.defaultMaximumStreamSeconds)", valueName: "seconds"),
            transform: SettingValue.seconds)
    var maxStreamSeconds: Duration?

    @Option(name: .customLong("feed-reset-after"),
            help: .setting("More changes than this after since: a feed answers reset (the client reloads its "
                           + "newest page) instead of replaying them.",
                           variable: "HISTORY_FEED_RESET_AFTER",
                           default: "\(FeedSettings.defaultResetAfter)", valueName: "count"),
            transform: SettingValue.resetAfter)
    var feedResetAfter: Int?

    /// The configuration these flags ask for, with `environment` filling in
    /// the flags not given and `ServerConfiguration`'s defaults the rest.
    /// - Throws: `ConfigurationError` naming the variable and what it takes.
    func configuration(environment: [String: String]) throws(ConfigurationError) -> ServerConfiguration {
        let environment = SettingEnvironment(environment)
        var configuration = ServerConfiguration()
        configuration.host = try environment.override(host, "HISTORY_HOST", SettingValue.nonEmpty)
            ?? configuration.host
        configuration.port = try environment.override(port, "HISTORY_PORT", SettingValue.port)
            ?? configuration.port
        configuration.databasePath = try environment.override(database, "HISTORY_DATABASE", SettingValue.nonEmpty)
            ?? configuration.databasePath
        configuration.durability = try environment.override(durability, "HISTORY_DURABILITY", SettingValue.durability)
            ?? configuration.durability
        configuration.maximumConnections = try environment.override(maxConnections, "HISTORY_MAX_CONNECTIONS",
                                                                     SettingValue.positiveCount)
            ?? configuration.maximumConnections
        configuration.logLevel = try environment.override(logLevel, "HISTORY_LOG_LEVEL", SettingValue.logLevel)
            ?? configuration.logLevel
        configuration.accessLog = try environment.override(accessLog, "HISTORY_ACCESS_LOG", SettingValue.onOff)
            ?? configuration.accessLog
        configuration.webViewer = try environment.override(webViewer, "HISTORY_WEB_VIEWER", SettingValue.onOff)
            ?? configuration.webViewer
        configuration.jwtHS256SecretFile = try environment.override(jwtHS256SecretFile, "HISTORY_JWT_HS256_SECRET_FILE",
                                                                     SettingValue.nonEmpty)
        configuration.jwtES256PublicKeys = try environment.overrideList(jwtES256PublicKeys, "HISTORY_JWT_ES256_PUBLIC_KEY",
                                                                        SettingValue.publicKeyFile)
        configuration.jwtAudience = try environment.override(jwtAudience, "HISTORY_JWT_AUDIENCE", SettingValue.nonEmpty)
        configuration.jwtIssuer = try environment.override(jwtIssuer, "HISTORY_JWT_ISSUER", SettingValue.nonEmpty)
        configuration.insecureNoAuth = try environment.override(insecureNoAuth ? true : nil, "HISTORY_INSECURE_NO_AUTH",
                                                                SettingValue.onOff)
            ?? configuration.insecureNoAuth
        configuration.allowedHosts = try environment.overrideList(allowedHosts, "HISTORY_ALLOWED_HOST", SettingValue.hostName)
        configuration.corsOrigins = try environment.overrideList(corsOrigins, "HISTORY_CORS_ORIGIN", SettingValue.origin)
        configuration.trustedProxies = try environment.overrideList(trustedProxies, "HISTORY_TRUSTED_PROXY",
                                                                    SettingValue.network)
        configuration.maximumResponseBytes = try environment.override(maxResponseBytes, "HISTORY_MAX_RESPONSE_BYTES",
                                                                       SettingValue.responseBytes)
            ?? configuration.maximumResponseBytes
        configuration.rateLimitReads = try environment.override(rateLimitReads, "HISTORY_RATE_LIMIT_READS", SettingValue.count)
        configuration.rateLimitWrites = try environment.override(rateLimitWrites, "HISTORY_RATE_LIMIT_WRITES",
                                                                  SettingValue.count)
        configuration.rateLimitBurst = try environment.override(rateLimitBurst, "HISTORY_RATE_LIMIT_BURST",
                                                                 SettingValue.positiveCount)
        configuration.maximumParkedPollsPerClient = try environment.override(maxParkedPollsPerClient,
                                                                              "HISTORY_MAX_PARKED_POLLS_PER_CLIENT",
                                                                              SettingValue.positiveCount)
            ?? configuration.maximumParkedPollsPerClient
        configuration.maximumConnectionsPerClient = try environment.override(maxConnectionsPerClient,
                                                                              "HISTORY_MAX_CONNECTIONS_PER_CLIENT",
                                                                              SettingValue.count)
            ?? configuration.maximumConnectionsPerClient
        configuration.writeTimeout = try environment.override(writeTimeout, "HISTORY_WRITE_TIMEOUT", SettingValue.seconds)
            ?? configuration.writeTimeout
        configuration.readConnections = try environment.override(readConnections, "HISTORY_READ_CONNECTIONS",
                                                                  SettingValue.readConnections)
        configuration.newestPageCacheBytes = try environment.override(newestPageCacheBytes,
                                                                       "HISTORY_NEWEST_PAGE_CACHE_MIB",
                                                                       SettingValue.newestPageCacheBytes)
            ?? configuration.newestPageCacheBytes
        configuration.maximumStreamDuration = try environment.override(maxStreamSeconds, "HISTORY_MAX_STREAM_SECONDS",
                                                                        SettingValue.seconds)
            ?? configuration.maximumStreamDuration
        configuration.feedResetAfter = try environment.override(feedResetAfter, "HISTORY_FEED_RESET_AFTER",
                                                                 SettingValue.resetAfter)
            ?? configuration.feedResetAfter
        return configuration
    }
}
