import HistoryStore

/// Who is asking, decided once per request before any route runs, so that
/// every permission check asks the same value instead of re-reading headers.
public enum Caller: Hashable, Sendable {
    /// Open mode (`subject` nil: no key is configured, every request is
    /// trusted as before) or a service token whose `scope` includes `admin`.
    case admin(subject: String?)
    /// A user token: its `sub`, already checked against the user id rule.
    case user(UserID)

    /// The token's `sub`, nil in open mode.
    public var subject: String? {
        switch self {
        case .admin(let subject): subject
        case .user(let user): user.rawValue
        }
    }

    /// True for open mode and admin tokens.
    public var isAdmin: Bool {
        if case .admin = self { return true }
        return false
    }
}
