import HTTPCore
import Synchronization

/// The bench's inbox page rows: one user's first inbox page, again and
/// again, each checked on its own (order, no repeat, every row consistent).
final class InboxPageUser: CallbackUser {
    let userID: String
    let limit: Int
    private var inbox = InboxSummary()
    private var walk = InboxWalk()
    private var steps = 0

    init(userID: String, limit: Int) {
        self.userID = userID
        self.limit = limit
    }

    func run(_ context: UserContext) {
        let target = "/v1/users/\(userID)/conversations?limit=\(limit)"
        context.send(LoadRequest(target: target, kind: .inboxPage)) { [self] response in
            if let response, response.status == 200 {
                do {
                    try inbox.scan(response.body)
                    walk.start()
                    walk.check(inbox, context: "inbox \(userID)", log: context.log)
                    for row in inbox.rows { InboxChecks.checkRow(row, context: "inbox \(userID)", log: context.log) }
                    if inbox.rows.isEmpty { context.log.violation(.responseShape, "GET \(target): no rows for a user with conversations") }
                    context.counters.inboxPages += 1
                } catch {
                    context.log.violation(.responseShape, "GET \(target): \(error)")
                }
            }
            steps += 1
            if steps % 64 == 0 { context.flush() }
            run(context)
        }
    }
}

/// The bench's inbox feed row: a user parked on `GET /v1/users/{uid}/events`
/// (the inbox of an app in the background). It starts from its inbox's
/// first page (the `activity` to follow, the last message of each of its
/// conversations), then long-polls. A row whose last message is newer than
/// the one this reader knew and was posted by the load tool records
/// post-to-feed latency: from the post's answer (``RunSettings/postAckTimes``: its
/// commit, as a client sees it) to the feed answer's arrival, 0 when the
/// feed answered first.
///
/// Checks: `activity` ascends within an answer and across answers, no
/// conversation twice in one answer, every row consistent.
final class InboxFeedReader: CallbackUser {
    let userID: String
    private var since: Int64?
    private var lastMessages: [String: Int64] = [:]
    private var inbox = InboxSummary()
    private var seen = Set<String>()
    private var polls = 0

    init(userID: String) {
        self.userID = userID
    }

    func run(_ context: UserContext) {
        guard let since else {
            let target = "/v1/users/\(userID)/conversations?limit=200"
            context.send(LoadRequest(target: target, kind: .inboxPage)) { [self] response in
                if let response, response.status == 200 {
                    do {
                        try inbox.scan(response.body)
                        for row in inbox.rows { lastMessages[row.conversationID] = max(lastMessages[row.conversationID] ?? 0, row.lastMessageID ?? 0) }
                        self.since = inbox.activity
                    } catch {
                        context.log.violation(.responseShape, "GET \(target): \(error)")
                    }
                }
                run(context)
            }
            return
        }
        let wait = min(Double(context.settings.longPollSeconds), context.control.secondsLeft())
        let target = "/v1/users/\(userID)/events?since=\(since)&wait=\(Self.waitText(wait))&limit=1000"
        context.send(LoadRequest(target: target, kind: .inboxEvents, start: MonotonicClock.now())) { [self] response in
            if let response, response.status == 200 {
                receive(response.body, arrival: MonotonicClock.now(), since: since, target: target, context)
            } else {
                self.since = nil
            }
            run(context)
        }
    }

    private func receive(_ body: [UInt8], arrival: UInt64, since: Int64, target: String, _ context: UserContext) {
        let label = "inbox feed \(userID) since=\(since)"
        do {
            try inbox.scan(body)
        } catch {
            context.log.violation(.responseShape, "GET \(target): \(error)")
            self.since = nil
            return
        }
        var previous = since
        var deliveries: [UInt64] = []
        seen.removeAll(keepingCapacity: true)
        for row in inbox.rows {
            context.counters.inboxEvents += 1
            if row.activity <= previous {
                context.log.violation(.inboxFeedOrdered, "\(label): \(row.conversationID) at activity \(row.activity) after \(previous)")
            }
            previous = row.activity
            if !seen.insert(row.conversationID).inserted {
                context.log.violation(.inboxNoRepeat, "\(label): \(row.conversationID) twice in one answer")
            }
            InboxChecks.checkRow(row, context: label, log: context.log)
            guard let id = row.lastMessageID, id > lastMessages[row.conversationID] ?? 0 else { continue }
            lastMessages[row.conversationID] = id
            // From the post's commit as the client sees it, its answer; a
            // delivery that arrives before that answer took no longer than it.
            if let clientID = row.lastMessageClientID, PostUser.dueTime(fromClientID: clientID) != nil {
                let committed = context.settings.postAckTimes?.time(of: clientID) ?? arrival
                deliveries.append(arrival > committed ? arrival - committed : 0)
            }
        }
        if inbox.activity < previous {
            context.log.violation(.inboxFeedOrdered, "\(label): answer activity \(inbox.activity) below its last row's \(previous)")
        }
        if !deliveries.isEmpty {
            context.shard.state.withLock { state in
                for nanoseconds in deliveries { state.record(.inboxDelivery, nanoseconds: nanoseconds, bytes: 0) }
            }
        }
        self.since = inbox.activity
        polls += 1
        if polls % 16 == 0 { context.flush() }
    }

    /// Seconds with three decimals, as the long-poll's `wait`.
    static func waitText(_ seconds: Double) -> String {
        let millis = Int((seconds * 1000).rounded(.down))
        let fraction = String(millis % 1000)
        return String(millis / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
