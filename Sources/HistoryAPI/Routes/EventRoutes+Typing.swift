import HistoryStore

extension EventRoutes {
    /// A conversation's stream carries `event: typing`, `data: {"typing":
    /// [...]}` on every change of the list (docs/API.md, "Live"), and the
    /// list as it is when the stream opens, unless no one is typing. The
    /// events have no `id`: typing is no change of the feed, and moves no
    /// cursor. The observation ends with the stream.
    func followTyping<Feed: PolledFeed>(in conversation: ConversationID, on stream: EventStream<Feed>) {
        let store = environment.store
        let observation = store.observeTyping(in: conversation) { typers in
            stream.send(event: "typing", data: JSONWriter.typingList(typers))
        }
        stream.onEnd { store.stopObservingTyping(observation) }
        let typers = store.typers(in: conversation)
        if !typers.isEmpty { stream.send(event: "typing", data: JSONWriter.typingList(typers)) }
    }
}
