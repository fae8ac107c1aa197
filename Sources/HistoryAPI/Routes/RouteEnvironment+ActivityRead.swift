import HistoryStore

extension RouteEnvironment {
    /// A store read whose `since` is the server's activity (the inbox, its
    /// feed, the backend feed): `versionAhead` is then about that activity,
    /// not a conversation's version. (A cursor the store cannot decode is
    /// its `.invalid(field: "cursor")`: `invalid_cursor`.)
    func activityRead<T>(_ request: APIRequest, _ body: () throws(StoreError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch {
            if case .versionAhead(let requested, let current) = error {
                throw APIError(.invalidVersion, "since (\(requested)) is greater than the server's activity (\(current))")
            }
            throw request.apiError(error)
        }
    }
}
