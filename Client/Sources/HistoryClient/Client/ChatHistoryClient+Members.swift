import Foundation

/// The members of a conversation: who may read it and post to it once the
/// server runs with tokens (in open mode the same data is kept, unenforced).
extension ChatHistoryClient {
    /// `GET /v1/conversations/{id}/members`: up to `limit` (1...1000) members
    /// whose user id sorts after `after`, in `user_id` order.
    ///
    /// ```swift
    /// var after: String? = nil
    /// repeat {
    ///     let page = try await client.members(of: "general", after: after)
    ///     show(page.members)
    ///     after = page.nextAfter
    /// } while after != nil
    /// ```
    public func members(of conversation: String, after: String? = nil, limit: Int? = nil) async throws
        -> HistoryMemberPage {
        var query: [(String, String)] = []
        if let after { query.append(("after", after)) }
        if let limit { query.append(("limit", String(limit))) }
        let endpoint = HistoryEndpoint(method: "GET", path: ["v1", "conversations", conversation, "members"],
                                       query: query, revalidates: true)
        return try await send(endpoint, as: HistoryMemberPage.self).value
    }

    /// `PUT /v1/conversations/{id}/members/{user}`: adds `user` with `role`,
    /// or sets the role of a member. Owners (and admin tokens) may; a member
    /// throws ``HistoryErrorCode/forbidden``.
    public func putMember(_ user: String, role: HistoryMemberRole = .member, in conversation: String)
        async throws -> MemberUpdate {
        let endpoint = HistoryEndpoint(
            method: "PUT", path: ["v1", "conversations", conversation, "members", user],
            body: try encode(PutMemberBody(role: role)))
        let (member, status) = try await send(endpoint, as: HistoryMember.self)
        return MemberUpdate(member: member, wasAdded: status == 201)
    }

    /// `DELETE /v1/conversations/{id}/members/{user}`: true when `user` was a
    /// member and no longer is, false when it was not one. Any member may
    /// remove itself; removing others takes an owner.
    @discardableResult
    public func removeMember(_ user: String, from conversation: String) async throws -> Bool {
        let endpoint = HistoryEndpoint(
            method: "DELETE", path: ["v1", "conversations", conversation, "members", user])
        return try await send(endpoint, as: RemovedBody.self).value.removed
    }
}

private struct PutMemberBody: Encodable {
    var role: HistoryMemberRole
}

private struct RemovedBody: Decodable {
    var removed: Bool
}
