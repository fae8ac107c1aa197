/// Every way a store operation can fail, as values a caller can switch on.
///
/// The server maps each case to one HTTP status and error code, in one place
/// (`APIError`); nothing here knows about HTTP. A failed operation never
/// leaves anything stored.
public enum StoreError: Error, Hashable, Sendable {
    case conversationNotFound(ConversationID)
    case messageNotFound(ConversationID, messageID: Int64)
    /// The user is not a member of the (existing) conversation.
    case memberNotFound(ConversationID, UserID)
    case conversationExists(ConversationID)
    /// The `client_id` was used before in this conversation with another sender or body.
    case clientIDConflict(clientID: String)
    /// Edits of a tombstone are refused (deleting it again is not an error).
    case messageDeleted(messageID: Int64)
    /// `reply_to` names no message of the same conversation.
    case replyTargetNotFound(messageID: Int64)
    /// `since` is greater than the conversation's current version (or, for
    /// the user feed, than the server's current activity).
    case versionAhead(requested: Int64, current: Int64)
    /// Input that breaks a rule of the contract.
    case invalid(field: InputField, reason: String)
    /// A setting of the store or a caller's use of it that no client input
    /// can cause (a reader count of 0, an empty bulk load): a bug of ours.
    case invalidSetting(String, reason: String)
    /// The database failed, as it reported it.
    case storage(StorageFailure)
    /// The store's id layout has no room left (message ids or conversation
    /// keys, see `MessagePlace`): nothing was written, and nothing more of
    /// that kind can be until an operator moves the data. Storage-full, not
    /// a SQLite failure: the transaction around it is intact.
    case idSpaceExhausted(String)
    /// The database cannot be reached now (a PostgreSQL server that is
    /// down, restarting or refusing connections, a connection lost mid-way):
    /// transient, the same request may succeed once it is back. Nothing
    /// was applied, except for a write whose COMMIT was in flight when the
    /// connection broke (its `client_id` makes the retry safe).
    case unavailable(reason: String)
    /// The schema cannot be used: newer than this code, or a migration changed after it was applied.
    case migration(reason: String)
    /// The store was closed; nothing more is accepted.
    case closed
    /// The caller's `AccessCheck` refused the request, decided in the
    /// operation's own snapshot or transaction; nothing was read out or
    /// written. (A non-member is `.conversationNotFound` instead.)
    case refused(AccessRefusal)

    /// The store cannot hold more: SQLite could not grow the file
    /// (`SQLITE_FULL`: the disk or the file's page limit is full), or the id
    /// space ran out. A caller can tell the client to retry once an operator
    /// made room, instead of reporting a bug.
    public var isStorageFull: Bool {
        switch self {
        case .storage(let failure): failure.isFull
        case .idSpaceExhausted: true
        default: false
        }
    }
}

/// Text for people (logs, start-up errors); callers switch on the cases.
extension StoreError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .conversationNotFound(let id): "no conversation '\(id.rawValue)'"
        case .messageNotFound(let id, let messageID): "no message \(messageID) in conversation '\(id.rawValue)'"
        case .memberNotFound(let id, let user): "'\(user.rawValue)' is not a member of conversation '\(id.rawValue)'"
        case .conversationExists(let id): "conversation '\(id.rawValue)' exists already"
        case .clientIDConflict(let clientID): "client_id '\(clientID)' was used with another sender or body"
        case .messageDeleted(let messageID): "message \(messageID) is deleted"
        case .replyTargetNotFound(let messageID): "reply_to \(messageID) names no message of this conversation"
        case .versionAhead(let requested, let current): "version \(requested) is ahead of the conversation's \(current)"
        case .invalid(let field, let reason): "\(field.name): \(reason)"
        case .invalidSetting(let name, let reason): "\(name): \(reason)"
        case .storage(let failure): failure.description
        case .idSpaceExhausted(let message): message
        case .unavailable(let message): "the database is unavailable: \(message)"
        case .migration(let reason): "migrations: \(reason)"
        case .closed: "the store is closed"
        case .refused(let refusal): "refused: \(refusal)"
        }
    }
}

/// A failure of the database itself, in its own terms: carried as data so
/// that the layers above (logs, the HTTP mapping) never need to know which
/// database it was to report it, and never mistake one's codes for the other's.
public struct StorageFailure: Hashable, Sendable, CustomStringConvertible {
    /// "SQLite" or "PostgreSQL".
    public let database: String
    /// The database's own code, as text: SQLite's extended result code, PostgreSQL's SQLSTATE.
    public let code: String
    public let message: String
    /// The disk (or the file's page limit) is full: nothing more can be
    /// stored until an operator makes room, which is no bug.
    public let isFull: Bool

    public init(database: String, code: String, message: String, isFull: Bool = false) {
        self.database = database
        self.code = code
        self.message = message
        self.isFull = isFull
    }

    public var description: String { "\(message) (\(database) \(code))" }
}

extension StoreError {
    /// A stored value that no sequence of this store's operations can
    /// produce (a conversation at version `Int64.max`, a seq outside the
    /// message layout), so the data was edited or damaged: the one
    /// operation fails with a clear message (500 and a log line over HTTP)
    /// instead of trapping on arithmetic that would overflow. Each backend
    /// names itself and its own code for damage.
    package static func impossibleStoredValue(_ message: String, database: String, code: String) -> StoreError {
        .storage(StorageFailure(database: database, code: code,
                                message: "\(message); the database was altered or is damaged"))
    }
}
