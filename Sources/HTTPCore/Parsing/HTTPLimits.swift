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
    /// Answers queued but not yet taken by the client, in bytes: while this
    /// much or more waits, the connection takes no further request and reads
    /// no further input, so what it holds stays under this budget plus the
    /// one answer that crossed it. Default: 262,144 (256 KiB), enough to keep
    /// a pipelining client's small answers flowing; an answer larger than the
    /// budget is still written whole, it only stops the next one.
    public var outputBudget: Int
    /// Every byte of an answer must reach the socket this long after it was
    /// queued; past it the connection is closed. Measured per answer from
    /// when it was queued, so a client that reads a trickle (which moves some
    /// bytes, never the oldest answer's clock) is cut off as surely as one
    /// that reads nothing; an answer written whole stops its clock.
    /// Default: 30 s.
    public var writeTimeout: Duration

    public init(maximumHeadBytes: Int = 16 * 1024, maximumBodyBytes: Int = 64 * 1024,
                headTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
                bodyTimeout: Duration = .seconds(30), outputBudget: Int = 256 * 1024,
                writeTimeout: Duration = .seconds(30)) {
        self.maximumHeadBytes = maximumHeadBytes
        self.maximumBodyBytes = maximumBodyBytes
        self.headTimeout = headTimeout
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.outputBudget = outputBudget
        self.writeTimeout = writeTimeout
    }
}
