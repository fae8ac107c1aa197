import Glibc
import HTTPCore
import Synchronization

/// `post` (and the writers of `tail`): appends with a `client_id` to the
/// live conversations; every acknowledged post is kept for the read-back.
///
/// The `client_id` ends with the post's due time on the monotonic clock
/// (`p<user>-<n>-<nanoseconds>`), so a tail reader receiving the message as
/// an event measures post-to-delivery latency with no shared table.
/// Every `retryEvery`-th post is sent again with the same `client_id`: the
/// contract says 200 with the original message, and nothing stored twice.
final class PostUser: CallbackUser {
    private var sequence = 0
    private var bodyBuffer: [UInt8] = []

    func run(_ context: UserContext) {
        let live = context.catalog.live(context.settings.liveConversations)
        let conversation = Int.random(in: 0..<live.count, using: &context.random)
        let entry = live[conversation]
        sequence += 1
        let due = context.takeSlot()
        let clientID = "p\(context.index)-\(sequence)-\(due)"
        bodyBuffer.removeAll(keepingCapacity: true)
        TextGenerator.appendBody(length: TextGenerator.length(using: &context.random), to: &bodyBuffer, using: &context.random)
        // A user token posts as its subject: a random name would be a sender_mismatch.
        let sender = TextGenerator.sender(using: &context.random)
        let postsAsSubject = context.settings.credentials.map { !$0.usersAreAdmins } ?? false
        let body = TextGenerator.appendJSON(sender: postsAsSubject ? nil : sender,
                                            body: String(decoding: bodyBuffer, as: UTF8.self), clientID: clientID, replyTo: nil)
        let target = "/v1/conversations/\(entry.id)/messages"
        context.send(LoadRequest(method: .post, target: target, body: body, kind: .post, start: due)) { [self] response in
            guard let response, response.status == 201 || response.status == 200 else { return finish(context) }
            guard let id = Self.messageID(response.body) else {
                context.log.violation(.responseShape, "post \(entry.id): the answer has no id")
                return finish(context)
            }
            context.acks.append(AckedPost(conversation: conversation, id: id, clientID: clientID))
            context.settings.postAckTimes?.record(clientID, at: MonotonicClock.now())
            guard sequence % context.settings.retryEvery == 0 else { return finish(context) }
            context.counters.retriesChecked += 1
            let retry = LoadRequest(method: .post, target: target, body: body, kind: .postRetry, start: MonotonicClock.now())
            context.send(retry) { [self] again in
                if let again {
                    let againID = Self.messageID(again.body)
                    if again.status != 200 || againID != id {
                        context.log.violation(.idempotentRetry, "post \(entry.id) client_id \(clientID): first id \(id), "
                                              + "the retry answered \(again.status) with id \(againID.map(String.init) ?? "none")")
                    }
                }
                finish(context)
            }
        }
    }

    private func finish(_ context: UserContext) {
        if sequence % 64 == 0 { context.flush() }
        run(context)
    }

    static func messageID(_ body: [UInt8]) -> Int64? {
        (try? BodyScan.integers(body, ["id"]))?.first ?? nil
    }

    /// The due time a `client_id` of ours carries, or nil for anyone else's.
    static func dueTime(fromClientID clientID: String) -> UInt64? {
        guard clientID.hasPrefix("p"), let dash = clientID.lastIndex(of: "-") else { return nil }
        return UInt64(clientID[clientID.index(after: dash)...])
    }
}

/// `tail`: a chat screen at the bottom, long-polling `events` on one live
/// conversation. Each created message that carries a due time in its
/// `client_id` records post-to-delivery latency.
///
/// Checks: event versions ascend within an answer and across answers, and a
/// created message's id is above every id this reader knew when it asked
/// (docs/API.md guarantee 2 seen through the feed).
final class TailReader: CallbackUser {
    private var since: Int64?
    private var knownNewestID: Int64 = 0
    private var polls = 0

    func run(_ context: UserContext) {
        let live = context.catalog.live(context.settings.liveConversations)
        let entry = live[context.index % live.count]
        let label = "tail \(entry.id)"
        guard let since else {
            // Start at the bottom, as a screen does: the newest page gives the version to follow.
            context.fetchPage(entry, .newest, limit: 1, label: label) { [self] coverage in
                if coverage != nil {
                    self.since = context.page.version
                    knownNewestID = context.page.ids.last ?? 0
                }
                run(context)
            }
            return
        }
        let wait = min(Double(context.settings.longPollSeconds), context.control.secondsLeft())
        let target = entry.eventsPrefix + "since=\(since)&wait=\(LongPollWait.text(seconds: wait))&limit=1000"
        context.send(LoadRequest(target: target, kind: .events, start: MonotonicClock.now())) { [self] response in
            if let response, response.status == 200 {
                receive(response.body, arrival: MonotonicClock.now(), since: since, target: target, label: label, context)
            } else {
                self.since = nil
            }
            run(context)
        }
    }

    private func receive(_ body: [UInt8], arrival: UInt64, since: Int64, target: String, label: String, _ context: UserContext) {
        do {
            try context.events.scan(body)
        } catch {
            context.log.violation(.responseShape, "\(label) GET \(target): \(error)")
            self.since = nil
            return
        }
        var previous = since
        var newestSeen = knownNewestID
        var deliveries: [UInt64] = []
        for event in context.events.events {
            context.counters.eventsChecked += 1
            if event.version <= previous {
                context.log.violation(.eventsOrdered, "\(label) since=\(since): event version \(event.version) after \(previous)")
            }
            previous = event.version
            if event.type == .created {
                if event.messageID <= knownNewestID {
                    context.log.violation(.noLateLowerID, "\(label) since=\(since): created message \(event.messageID) "
                                          + "is not above \(knownNewestID), already known")
                }
                if let clientID = event.clientID, let due = PostUser.dueTime(fromClientID: clientID), arrival > due {
                    deliveries.append(arrival - due)
                }
            }
            newestSeen = max(newestSeen, event.messageID)
        }
        if context.events.version < previous {
            context.log.violation(.eventsOrdered, "\(label): answer version \(context.events.version) below its last event's \(previous)")
        }
        if !deliveries.isEmpty {
            context.shard.state.withLock { state in
                for nanoseconds in deliveries { state.record(.delivery, nanoseconds: nanoseconds, bytes: 0) }
            }
        }
        knownNewestID = newestSeen
        self.since = context.events.version
        polls += 1
        if polls % 16 == 0 { context.flush() }
    }
}

/// Holds idle keep-alive connections open (docs/performance.md: the cost of idle
/// connections): bare descriptors, never read or written, so ten thousand
/// cost the tool next to nothing.
final class IdleHolder {
    let count: Int
    let endpoint: ServerEndpoint
    private var descriptors: [Int32] = []

    init(count: Int, endpoint: ServerEndpoint) {
        self.count = count
        self.endpoint = endpoint
    }

    deinit { close() }

    /// Opens them all (a blocking connect each); returns how many opened.
    func open() -> Int {
        for _ in 0..<count {
            if let fd = RawSocket.startConnect(to: endpoint, nonBlocking: false) { descriptors.append(fd) }
        }
        return descriptors.count
    }

    func close() {
        for fd in descriptors { Glibc.close(fd) }
        descriptors.removeAll()
    }
}
