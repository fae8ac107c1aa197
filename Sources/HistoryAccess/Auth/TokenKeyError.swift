/// A key configuration the server cannot start with: a missing or unreadable
/// file, a short secret, a malformed line or PEM, a key id given twice.
///
/// `message` is one line meant for stderr before exiting 2. It names the
/// file, line and key id, never a secret's bytes.
public struct TokenKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
