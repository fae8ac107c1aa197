import ArgumentParser
import HistoryAPI
import HistoryStore

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
        abstract: "Serves chat history (API v1) over HTTP/1.1 from a SQLite file."
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

    @Option(help: .setting("The SQLite file; created with its folder when missing.",
                           variable: "HISTORY_DATABASE", default: ServerOptions.defaults.databasePath, valueName: "path"),
            transform: SettingValue.nonEmpty)
    var database: String?

    @Option(help: .setting("full: an answered write survives power loss; normal: it survives a crash of the process.",
                           variable: "HISTORY_DURABILITY", default: ServerOptions.defaults.durability.rawValue),
            transform: SettingValue.durability)
    var durability: Durability?

    @Option(help: .setting("Past this many open connections a new one gets 503 and is closed.",
                           variable: "HISTORY_MAX_CONNECTIONS", default: "\(ServerOptions.defaults.maximumConnections)",
                           valueName: "count"),
            transform: SettingValue.positiveCount)
    var maxConnections: Int?

    @Option(help: .setting("debug, info, warning or error; messages go to stderr.",
                           variable: "HISTORY_LOG_LEVEL", default: ServerOptions.defaults.logLevel.name, valueName: "level"),
            transform: SettingValue.logLevel)
    var logLevel: LogLevel?

    @Option(help: .setting("One line per request on stdout: method, path, status, bytes, microseconds.",
                           variable: "HISTORY_ACCESS_LOG", default: SettingValue.onOffName(ServerOptions.defaults.accessLog),
                           valueName: "on|off"),
            transform: SettingValue.onOff)
    var accessLog: Bool?

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
        return configuration
    }
}
