/// A statement prepared on one session, by the name it was given there.
///
/// Only meaningful on the connection that prepared it: the name lives in
/// that server session and dies with it.
public struct PGPreparedStatement: Sendable, Hashable {
    public let name: String
    public let sql: String
}
