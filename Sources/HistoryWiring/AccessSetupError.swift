/// Why the server cannot run in the access mode its settings ask for: one
/// line for stderr, exit status 2 like a bad flag.
public struct AccessSetupError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
