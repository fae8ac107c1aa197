import HTTPCore
import HistoryAccess
import HistoryStore

/// `POST /v1/conversations` and `GET /v1/conversations/{cid}`.
struct ConversationRoutes {
    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.post, "/v1/conversations") { request throws(APIError) in try create(request) }
        router.add(.get, "/v1/conversations/{cid}", shortcut: { request in
            // Its tag is its id and version: a kept version decides a 304.
            environment.keptVersion(forConditional: request, .readConversation).flatMap { conversation, version in
                request.notModified(EntityTag.conversation(conversation, version: version, gzip: request.acceptsGzip))
            }
        }) { request throws(APIError) in
            let id = try environment.conversationID(request)
            let access = try environment.access(request, .readConversation)
            let conversation = try environment.read(request) { () throws(StoreError) in
                try environment.store.conversation(id, access: access)
            }
            // The read is O(1): a 304 spares only the encoding.
            let tag = EntityTag.conversation(conversation, gzip: request.acceptsGzip)
            if let notModified = request.notModified(tag) { return notModified }
            return request.json(.ok, JSONWriter.conversation(conversation), headers: ["ETag": tag.value])
        }
    }

    /// Body `{"id"?, "title"?}`; an empty body is `{}`. 201 with `Location`.
    /// A user creating it becomes its owner, in the same transaction; only
    /// an admin may choose the id (`AccessPolicy`).
    private func create(_ request: APIRequest) throws(APIError) -> Answer {
        let body = try RequestBody(request.http.body, emptyMeansEmptyObject: true)
        let chosenID = try body.optionalString(.conversationID)
        let grant = try environment.authorize(request, .createConversation(choosingID: chosenID != nil))
        var id: ConversationID?
        if let text = chosenID {
            guard let valid = ConversationID(text) else {
                throw APIError(invalid: .conversationID, "id must be 1 to 64 characters of [A-Za-z0-9_-]")
            }
            id = valid
        }
        let title = try body.optionalString(.title)
        try APIError.enforcing { () throws(RuleViolation) in try MessageRules.checkTitle(title) }
        return request.later { promise in
            environment.store.createConversation(id: id, title: title, owner: grant.user) { result in
                promise.complete(result) { conversation in
                    promise.succeed(.created, json: JSONWriter.conversation(conversation),
                                    headers: ["Location": "/v1/conversations/\(conversation.id.rawValue)"])
                }
            }
        }
    }
}
