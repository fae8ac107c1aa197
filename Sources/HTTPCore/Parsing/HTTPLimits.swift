/// The limits that keep one client from holding the server's memory or
/// connections, each answered with its own status (the responder renders
/// the body) before the connection is closed.
public struct HTTPLimits: Sendable, Hashable {
    /// Request line plus header fields, in bytes; past it: 431.
    /// Default: 16,384 (16 KiB).
    public var maximumHeadBytes: Int
    /// Request body, in bytes; past it: 413. Default: 65,536 (64 KiB).
    public var maximumBodyBytes: Int
    /// A request's head must be complete this long after its first byte
    /// (or after the connection opened); past it: 408. Default: 10 s.
    public var headTimeout: Duration
    /// A keep-alive connection with no request under way is closed after
    /// this long. Default: 60 s.
    public var idleTimeout: Duration
    /// A request's body must be complete this long after its head; past it: 408.
    /// Default: 30 s.
    public var bodyTimeout: Duration

    public init(maximumHeadBytes: Int = 16 * 1024, maximumBodyBytes: Int = 64 * 1024,
                headTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
                bodyTimeout: Duration = .seconds(30)) {
        self.maximumHeadBytes = maximumHeadBytes
        self.maximumBodyBytes = maximumBodyBytes
        self.headTimeout = headTimeout
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
    }
}
