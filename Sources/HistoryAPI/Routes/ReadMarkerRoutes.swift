import HTTPCore
import HistoryAccess
import HistoryStore

/// `PUT /v1/conversations/{cid}/members/{uid}/read` body
/// `{"last_read_id": N}`: moves a member's read marker forward.
///
/// Forward only, and clamped by the store: N at or below the marker
/// changes nothing and is still 200 with the current state (two devices
/// racing must not move the marker back); N above `newest_id` is taken as
/// `newest_id`. A write: rate-limited as one.
///
/// Who may: a user token its own marker in a conversation it is a member
/// of (a stranger gets the 404 a missing conversation gets; another user's
/// marker 403); admins and open mode anyone's, and for a user who is not a
/// member they learn so: 404 `member_not_found`.
struct ReadMarkerRoutes {
    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.put, "/v1/conversations/{cid}/members/{uid}/read") { request throws(APIError) in try markRead(request) }
    }

    private func markRead(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let target = try environment.pathUser(request, at: 1)
        let access = try environment.access(request, .markRead(target: target))
        // 0 up to Int64.max (`invalid_message_id`): 0 reads nothing, as a null marker.
        let upTo = try RequestBody(request.http.body).requiredInteger(ReadState.lastReadIDRule)
        return request.later { promise in
            environment.store.markRead(target, in: conversation, upTo: upTo, access: access) { result in
                promise.complete(result) { state in promise.succeed(.ok, json: JSONWriter.readState(state)) }
            }
        }
    }
}
