/// Supplies the bearer token of a tokens-mode server: the app's own code,
/// typically a call to its backend that mints a short-lived JWT for the
/// signed-in user.
///
/// The client calls it before every request and sends what it returns as
/// `Authorization: Bearer <token>`; keep a token in memory and return it
/// while it is fresh, so most calls cost nothing. When the server still
/// answers 401 `token_expired` (a clock that drifted, a token that expired
/// in flight), the client calls it once more and retries the request once:
/// return a newly minted token on that call, or the retry fails the same way.
/// What it throws reaches the caller as ``HistoryClientError/tokenUnavailable(_:)``.
public typealias HistoryTokenProvider = @Sendable () async throws -> String
