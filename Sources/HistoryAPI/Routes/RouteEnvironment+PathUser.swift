import HistoryAccess
import HistoryStore

extension RouteEnvironment {
    /// The path segment that means "the caller": the token's `sub`.
    static let me = "me"

    /// The `{uid}` of every user path (`/v1/users/{uid}/...` and
    /// `.../members/{uid}...`): a valid user id, or `me` for the token's
    /// subject, one rule everywhere (so no user can be addressed as the
    /// literal `me`). `me` without a token (open mode) names nobody: 400
    /// `invalid_user_id` saying so, rather than a guess.
    func pathUser(_ request: APIRequest, at index: Int) throws(APIError) -> UserID {
        let segment = request.pathParameters[index]
        if segment == Self.me {
            guard let subject = request.caller?.subject else {
                throw APIError(.invalidUserID, "'me' names the token's subject, and this request has no token: name the user")
            }
            guard let user = UserID(subject) else { throw APIError.invalidUserID(subject) }
            return user
        }
        guard let segment, let user = UserID(segment) else { throw APIError.invalidUserID(segment) }
        return user
    }
}
