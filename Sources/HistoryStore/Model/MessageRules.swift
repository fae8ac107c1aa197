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
    /// The fields limited in characters are limited in bytes too, at this
    /// many bytes of UTF-8 per character: more than any emoji sequence in use
    /// needs (a family with skin tones is about 35 bytes, and is one character),
    /// so only abuse hits it, such as one letter under 30,000 combining marks,
    /// one character of 60 KB that would make every page holding it heavy.
    public static let maximumBytesPerCharacter = 32

    /// The first rule `message` breaks. The HTTP layer checks before it
    /// asks, the store (`validate`) before it writes: one rule, one message.
    public static func check(_ message: NewMessage) throws(RuleViolation) {
        try checkSender(message.sender)
        try checkBody(message.body)
        if let clientID = message.clientID, !fits(clientID, characters: maximumClientIDCharacters, allowEmpty: false) {
            throw RuleViolation(.clientID, "must be 1 to \(maximumClientIDCharacters) characters"
                + " (at most \(maximumClientIDCharacters * maximumBytesPerCharacter) bytes of UTF-8)")
        }
        if let replyTo = message.replyTo, replyTo <= 0 {
            throw RuleViolation(.replyTo, "must be a positive message id")
        }
    }

    public static func checkSender(_ sender: String) throws(RuleViolation) {
        if !fits(sender, characters: maximumSenderCharacters, allowEmpty: false) {
            throw RuleViolation(.sender, "must be 1 to \(maximumSenderCharacters) characters"
                + " (at most \(maximumSenderCharacters * maximumBytesPerCharacter) bytes of UTF-8)")
        }
    }

    public static func checkBody(_ body: String) throws(RuleViolation) {
        if body.isEmpty || body.utf8.count > maximumBodyBytes {
            throw RuleViolation(.body, "must be 1 to \(maximumBodyBytes) bytes of UTF-8")
        }
    }

    public static func checkTitle(_ title: String?) throws(RuleViolation) {
        if let title, !fits(title, characters: maximumTitleCharacters, allowEmpty: true) {
            throw RuleViolation(.title, "must be at most \(maximumTitleCharacters) characters"
                + " (and \(maximumTitleCharacters * maximumBytesPerCharacter) bytes of UTF-8)")
        }
    }

    // MARK: - The same rules as the store reports them

    public static func validate(_ message: NewMessage) throws(StoreError) {
        do { try check(message) } catch { throw StoreError(error) }
    }

    public static func validateBody(_ body: String) throws(StoreError) {
        do { try checkBody(body) } catch { throw StoreError(error) }
    }

    public static func validateTitle(_ title: String?) throws(StoreError) {
        do { try checkTitle(title) } catch { throw StoreError(error) }
    }

    /// Bytes first: that count is free, and it bounds the character count's
    /// walk over the text.
    private static func fits(_ text: String, characters: Int, allowEmpty: Bool) -> Bool {
        let bytes = text.utf8.count
        guard bytes <= characters * maximumBytesPerCharacter else { return false }
        guard bytes > 0 else { return allowEmpty }
        return text.count <= characters
    }
}
