/// The answer to an append.
///
/// A retried append (the same `client_id` again, e.g. after a timeout whose
/// first attempt did land) answers the original message with HTTP 200 and
/// stores nothing: ``wasCreated`` tells the two apart, so an app can drop the
/// optimistic row of a retry instead of showing the message twice.
public struct AppendResult: Hashable, Sendable {
    public var message: HistoryMessage
    /// True for 201 (stored now); false for 200 (an earlier append with this
    /// `client_id` stored it).
    public var wasCreated: Bool

    public init(message: HistoryMessage, wasCreated: Bool) {
        self.message = message
        self.wasCreated = wasCreated
    }
}
