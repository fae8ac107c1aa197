import Foundation
import HTTPCore
import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Synchronization
import Testing

/// The backend feed of two instances on one PostgreSQL database
/// (docs/API.md, "Live"): read alternately through both while both take
/// posts at once, it gives every change exactly once, in activity order;
/// and a poll parked on one is woken by a commit through the other.
@Suite("The backend feed is exact across two instances", .postgresCluster)
struct CrossInstanceServerFeedTests {
    @Test(.timeLimit(.minutes(3)))
    func concurrentPostsOnBothInstancesAreReadOnceInOrder() throws {
        // Synchronous: `withTwoInstances` finds the suite's cluster in the
        // test's task; the posters are threads of their own.
        let failures = try withTwoInstances { a, b in
                var failures: [String] = []
                let setup = try HTTPClientConnection(host: "127.0.0.1", port: a.port, timeout: .seconds(60))
                defer { setup.close() }
                for id in ["x", "y"] {
                    guard try setup.call(.post, "/v1/conversations", json: #"{"id":"\#(id)"}"#).status == 201 else {
                        return ["could not create \(id)"]
                    }
                }
                let start = try setup.serverFeed(since: 0).activity

                // Two posters on each instance, into both conversations.
                let perPoster = 40
                let posted = Mutex<Set<Int64>>([])
                let errors = Mutex<[String]>([])
                let group = DispatchGroup()
                for (index, server) in [a, a, b, b].enumerated() {
                    group.enter()
                    Thread {
                        defer { group.leave() }
                        do {
                            let client = try HTTPClientConnection(host: "127.0.0.1", port: server.port, timeout: .seconds(60))
                            defer { client.close() }
                            for number in 0..<perPoster {
                                let conversation = (index + number) % 2 == 0 ? "x" : "y"
                                let id = try client.appendMessage(conversation, sender: "p\(index)", body: "m\(number)")
                                posted.withLock { _ = $0.insert(id) }
                            }
                        } catch {
                            errors.withLock { $0.append("poster \(index): \(error)") }
                        }
                    }.start()
                }

                // Meanwhile: read through A and B in turn, long-polling, small pages.
                let readers = [try HTTPClientConnection(host: "127.0.0.1", port: a.port, timeout: .seconds(60)),
                               try HTTPClientConnection(host: "127.0.0.1", port: b.port, timeout: .seconds(60))]
                defer { for reader in readers { reader.close() } }
                var seen: [ServerEventBody] = []
                var since = start
                var turn = 0
                let deadline = ContinuousClock.now + .seconds(120)
                while seen.count < 4 * perPoster && ContinuousClock.now < deadline {
                    let response = try readers[turn % 2].call(.get, "/v1/events?since=\(since)&limit=7&wait=2")
                    turn += 1
                    guard response.status == 200 else {
                        failures.append("a read answered \(response.status): \(response.bodyText)")
                        break
                    }
                    let feed = try response.decode(ServerFeedBody.self)
                    seen += feed.events
                    since = feed.activity
                }
                group.wait()
                failures += errors.withLock { $0 }
                // Whatever the last reads missed, the rest from the other instance.
                seen += try readers[turn % 2].wholeServerFeed(since: since, limit: 50)

                let activities = seen.map(\.activity)
                if activities != activities.sorted() || Set(activities).count != activities.count {
                    failures.append("activities out of order or repeated: \(activities)")
                }
                let ids = seen.compactMap(\.message?.id)
                if Set(ids).count != ids.count { failures.append("a message was read twice") }
                let all = posted.withLock { $0 }
                if Set(ids) != all { failures.append("read \(Set(ids).count) messages, posted \(all.count)") }
                if !seen.allSatisfy({ $0.type == "created" }) { failures.append("unexpected types: \(Set(seen.map(\.type)))") }
                // Both instances agree on the whole log.
                let throughA = try readers[0].wholeServerFeed(since: start, limit: 33).map(\.activity)
                let throughB = try readers[1].wholeServerFeed(since: start, limit: 1000).map(\.activity)
                if throughA != activities || throughB != activities { failures.append("the instances' logs differ") }
                return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test(.timeLimit(.minutes(2)))
    func aPollParkedOnOneInstanceIsWokenByACommitThroughTheOther() throws {
        let outcome = try withTwoInstances { a, b -> (status: Int, types: [String], id: Int64?, posted: Int64) in
                let throughB = try HTTPClientConnection(host: "127.0.0.1", port: b.port, timeout: .seconds(60))
                defer { throughB.close() }
                _ = try throughB.call(.post, "/v1/conversations", json: #"{"id":"general"}"#)
                let since = try throughB.serverFeed(since: 0).activity
                let poll = try HTTPClientConnection(host: "127.0.0.1", port: a.port, timeout: .seconds(60))
                defer { poll.close() }
                try poll.send(HTTPRequest(method: .get, target: "/v1/events?since=\(since)&wait=30", headers: ["Host": "127.0.0.1"]))
                _ = eventually { a.parkedLongPollCount == 1 }
                let posted = try throughB.appendMessage("general", sender: "bob")
                let answer = try poll.receive()
                let feed = try answer.decode(ServerFeedBody.self)
                return (answer.status, feed.events.map(\.type), feed.events.first?.message?.id, posted)
        }
        #expect(outcome.status == 200 && outcome.types == ["created"] && outcome.id == outcome.posted)
    }
}
