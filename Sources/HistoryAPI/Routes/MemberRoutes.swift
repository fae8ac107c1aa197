import HTTPCore
import HistoryAccess
import HistoryStore

/// The members of a conversation: list, add or change, remove.
///
/// In open mode the same routes keep the same data, unenforced: an app
/// backend that authenticates on its own still gets membership.
struct MemberRoutes {
    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.get, "/v1/conversations/{cid}/members") { request throws(APIError) in try list(request) }
        router.add(.put, "/v1/conversations/{cid}/members/{uid}") { request throws(APIError) in try put(request) }
        router.add(.delete, "/v1/conversations/{cid}/members/{uid}") { request throws(APIError) in try remove(request) }
    }

    /// `?after=USER&limit=L`: a keyset page in `user_id` order.
    private func list(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let access = try environment.access(request, .readMembers)
        let (after, limit) = try Self.listQuery(request.query)
        let page = try environment.read(request) { () throws(StoreError) in
            try environment.store.members(of: conversation, after: after, limit: limit, access: access)
        }
        // No kept counter covers the member list: tagged by its bytes.
        let json = JSONWriter.memberPage(page)
        return request.json(json, etag: .body(json, gzip: request.acceptsGzip))
    }

    /// `after` a valid user id (`invalid_cursor`), `limit` 1...1000 (`invalid_limit`).
    static func listQuery(_ query: QueryParameters) throws(APIError) -> (after: UserID?, limit: Int) {
        var after: UserID?
        if let text = try query.value("after", invalid: .invalidCursor) {
            guard let user = UserID(text) else {
                throw APIError(.invalidCursor, "after must be a user id, 1 to 64 characters of [A-Za-z0-9_.@-], not '\(abbreviated(text))'")
            }
            after = user
        }
        var limit = 100
        if let text = try query.value("limit", invalid: .invalidLimit) {
            guard let value = DecimalParser.positiveInt64(text), value <= MemberPage.limitRange.upperBound else {
                throw APIError(.invalidLimit, "limit must be an integer from \(MemberPage.limitRange.lowerBound) to \(MemberPage.limitRange.upperBound), not '\(abbreviated(text))'")
            }
            limit = Int(value)
        }
        return (after, limit)
    }

    /// Body `{"role":"member"|"owner"}` (default `member`; an empty body is
    /// `{}`): 201 with the member when added, 200 when changed or unchanged.
    private func put(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let target = try user(request)
        let access = try environment.access(request, .putMember(target: target))
        let body = try RequestBody(request.http.body, emptyMeansEmptyObject: true)
        var role = MemberRole.member
        if let text = try body.optionalString(.role) {
            guard let named = MemberRole(rawValue: text) else {
                throw APIError(.invalidRole, "role must be member or owner, not '\(abbreviated(text))'")
            }
            role = named
        }
        return request.later { promise in
            environment.store.putMember(target, role: role, in: conversation, access: access) { result in
                promise.complete(result) { outcome in
                    switch outcome {
                    case .added(let member): promise.succeed(.created, json: JSONWriter.member(member))
                    case .changed(let member), .unchanged(let member): promise.succeed(.ok, json: JSONWriter.member(member))
                    }
                }
            }
        }
    }

    /// 200 `{"removed": bool}`; the removed user's parked polls on the
    /// conversation are answered 404 once the removal is committed.
    private func remove(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let target = try user(request)
        let access = try environment.access(request, .removeMember(target: target))
        return request.later { promise in
            environment.store.removeMember(target, from: conversation, access: access) { [environment] result in
                promise.complete(result) { removed in
                    if removed { environment.longPolls.revoke(user: target, in: conversation) }
                    promise.succeed(.ok, json: JSONWriter.removed(removed))
                }
            }
        }
    }

    /// The `{uid}` of the path: `me` for the caller, as in every user path,
    /// else a valid user id or 400 `invalid_user_id`.
    private func user(_ request: APIRequest) throws(APIError) -> UserID {
        try environment.pathUser(request, at: 1)
    }
}
