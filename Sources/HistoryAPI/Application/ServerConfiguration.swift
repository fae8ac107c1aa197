import HistoryStore

/// Everything a `HistoryApplication` is built from, each setting with its default.
///
/// A plain value: `history-server` fills it from its flags and environment
/// variables (see `ServerOptions` there), tests build it directly.
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
}
