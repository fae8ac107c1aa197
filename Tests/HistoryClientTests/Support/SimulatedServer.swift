import HistoryClient

/// The simulated conversation behind a switch: while `down`, every call
/// fails as a dropped connection would; `losesNextAnswer` stores a post but
/// loses its answer (the case a `client_id` retry exists for).
struct SimulatedServer {
    struct Down: Error {}

    var conversation = SimulatedConversation()
    var down = false
    var losesNextAnswer = false
    /// Events answers handed out, and the events in them: what a feed replayed.
    private(set) var eventsServed = 0

    func page(_ request: WindowRequest) throws(Down) -> HistoryPage {
        if down { throw Down() }
        return conversation.page(request)
    }

    mutating func events(since: Int64, limit: Int, minID: Int64? = nil, maxID: Int64? = nil)
        throws(Down) -> HistoryEventBatch {
        if down { throw Down() }
        let batch = conversation.events(since: since, limit: limit, minID: minID, maxID: maxID)
        eventsServed += batch.events.count
        return batch
    }

    mutating func post(body: String, sender: String, clientID: String) throws(Down) -> HistoryMessage {
        if down { throw Down() }
        let message = conversation.post(body: body, sender: sender, clientID: clientID)
        if losesNextAnswer {
            losesNextAnswer = false
            throw Down()
        }
        return message
    }
}
