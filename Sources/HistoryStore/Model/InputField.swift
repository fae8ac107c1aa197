/// A value a client sends, by the name the contract gives it: a body field
/// or a query parameter. A broken rule names its field with this, so the
/// HTTP layer picks the error code by a `switch`, never by spelling.
public enum InputField: String, Hashable, Sendable, CaseIterable {
    // Body fields.
    case sender
    case body
    case clientID = "client_id"
    case replyTo = "reply_to"
    case title
    /// The `id` of a new conversation.
    case conversationID = "id"
    // Query parameters of a page.
    case before
    case after
    case around
    case aroundTime = "around_time"
    case limit
    case window
    // Query parameters of the change feed (`limit` is shared).
    case since
    case minID = "min_id"
    case maxID = "max_id"
    case wait
    // The body of a member's PUT.
    case role
    // The inbox: its page cursor, and the body of a read marker's PUT.
    case cursor
    case lastReadID = "last_read_id"

    /// The name as a client writes it, for messages: "sender must be ...".
    public var name: String { rawValue }
}
