import HTTPCore
import Synchronization

/// `feed`: an app backend following `GET /v1/events` (the backend feed) with
/// long-polls while the writers post, as a push-notification sender does.
///
/// Checks, per answer: `activity` ascends within it and across answers
/// (`events_ordered`); every post of ours it carries is recorded in the
/// ``ServerFeedLedger``, which after the run finds each acknowledged post
/// there exactly once (`feed_exact`). A created message's `client_id`
/// carries its post's due time: post-to-delivery latency, as `tail`'s.
final class ServerFeedReader: CallbackUser {
    private let ledger: ServerFeedLedger
    private let reader: Int
    private var since: Int64
    private var answers = 0

    init(ledger: ServerFeedLedger, reader: Int) {
        self.ledger = ledger
        self.reader = reader
        since = ledger.start
    }

    func run(_ context: UserContext) {
        let wait = min(Double(context.settings.longPollSeconds), context.control.secondsLeft())
        let target = "/v1/events?since=\(since)&wait=\(LongPollWait.text(seconds: wait))&limit=1000"
        context.send(LoadRequest(target: target, kind: .events, start: MonotonicClock.now())) { [self] response in
            // A refusal or a failure (already counted) asks again from the same cursor.
            if let response, response.status == 200 {
                receive(response.body, arrival: MonotonicClock.now(), target: target, context)
            }
            run(context)
        }
    }

    private func receive(_ body: [UInt8], arrival: UInt64, target: String, _ context: UserContext) {
        do {
            try context.events.scan(body, feed: .server)
        } catch {
            context.log.violation(.responseShape, "feed GET \(target): \(error)")
            return
        }
        var previous = since
        var deliveries: [UInt64] = []
        var clientIDs: [String] = []
        for event in context.events.events {
            context.counters.eventsChecked += 1
            if event.version <= previous {
                context.log.violation(.eventsOrdered, "feed since=\(since): activity \(event.version) after \(previous)")
            }
            previous = event.version
            guard event.type == .created, let clientID = event.clientID, let due = PostUser.dueTime(fromClientID: clientID) else { continue }
            clientIDs.append(clientID)
            if arrival > due { deliveries.append(arrival - due) }
        }
        if context.events.version < previous {
            context.log.violation(.eventsOrdered, "feed: answer activity \(context.events.version) below its last event's \(previous)")
        }
        if !deliveries.isEmpty {
            context.shard.state.withLock { state in
                for nanoseconds in deliveries { state.record(.delivery, nanoseconds: nanoseconds, bytes: 0) }
            }
        }
        ledger.saw(clientIDs, reader: reader, cursor: context.events.version, log: context.log)
        since = context.events.version
        answers += 1
        if answers % 16 == 0 { context.flush() }
    }
}

/// A long-poll's `wait` parameter: seconds with at most three decimals, rounded down.
enum LongPollWait {
    static func text(seconds: Double) -> String {
        let milliseconds = max(0, Int((seconds * 1000).rounded(.down)))
        let fraction = String(milliseconds % 1000)
        return String(milliseconds / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
