/// The limits the contract puts on what a client may store, in one place so
/// the store and the HTTP layer can never disagree.
public enum MessageRules {
    /// `body`: 1 byte to 16 KiB of UTF-8.
    public static let maximumBodyBytes = 16 * 1024
    /// `sender`: 1 to 64 characters.
    public static let maximumSenderCharacters = 64
    /// `client_id`: 1 to 128 characters; a client's idempotency key (a UUID is 36).
    public static let maximumClientIDCharacters = 128
    /// `title`: at most 256 characters; empty and absent both mean "no title".
    public static let maximumTitleCharacters = 256

    /// Throws `StoreError.invalid` for the first rule `message` breaks.
    public static func validate(_ message: NewMessage) throws(StoreError) {
        try validateSender(message.sender)
        try validateBody(message.body)
        if let clientID = message.clientID, clientID.isEmpty || clientID.count > maximumClientIDCharacters {
            throw .invalid(field: "client_id", reason: "must be 1 to \(maximumClientIDCharacters) characters")
        }
        if let replyTo = message.replyTo, replyTo <= 0 {
            throw .invalid(field: "reply_to", reason: "must be a positive message id")
        }
    }

    public static func validateSender(_ sender: String) throws(StoreError) {
        if sender.isEmpty || sender.count > maximumSenderCharacters {
            throw .invalid(field: "sender", reason: "must be 1 to \(maximumSenderCharacters) characters")
        }
    }

    public static func validateBody(_ body: String) throws(StoreError) {
        if body.isEmpty || body.utf8.count > maximumBodyBytes {
            throw .invalid(field: "body", reason: "must be 1 to \(maximumBodyBytes) bytes of UTF-8")
        }
    }

    public static func validateTitle(_ title: String?) throws(StoreError) {
        if let title, title.count > maximumTitleCharacters {
            throw .invalid(field: "title", reason: "must be at most \(maximumTitleCharacters) characters")
        }
    }
}
