import Dispatch
import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryTestSupport
import Synchronization
import Testing

/// Guarantee 1 over HTTP: walking `before` pages down from the newest, and
/// `after` pages up from a known id, returns every message exactly once, in
/// order, while four other clients keep posting.
@Suite("API: guarantee 1, exact pages under concurrent posts")
struct ExactPagesTests {
    static let posters = 4
    static let postsPerPoster = 150

    @Test func walksSeeEveryMessageOnceWhileOthersPost() throws {
        try withRunningServer { server in
            let walker = try server.connect()
            defer { walker.close() }
            try walker.createConversation("g1")
            let start = try walker.appendMessage("g1", body: "start")
            for index in 0..<40 { try walker.appendMessage("g1", body: "seed \(index)") }

            let failures = Mutex<[String]>([])
            let group = DispatchGroup()
            for poster in 0..<Self.posters {
                group.enter()
                DispatchQueue.global().async {
                    defer { group.leave() }
                    do {
                        let client = try server.connect()
                        defer { client.close() }
                        for index in 0..<Self.postsPerPoster {
                            let body = #"{"sender":"p\#(poster)","body":"post \#(index)","client_id":"p\#(poster)-\#(index)"}"#
                            let response = try client.post("/v1/conversations/g1/messages", body)
                            if response.status != 201 { failures.withLock { $0.append("post: \(response.status) \(response.bodyText)") } }
                        }
                    } catch {
                        failures.withLock { $0.append("poster \(poster): \(error)") }
                    }
                }
            }

            // Walk up with `after` while the posters run, until the posters are done and the walk is live.
            var upward: [Int64] = []
            var cursor = start
            var postersDone = false
            for _ in 0..<10_000 {
                let page = try walker.get("/v1/conversations/g1/messages?limit=7&after=\(cursor)").decode(HistoryPage.self)
                upward += page.messages.map(\.id)
                cursor = page.newestID ?? cursor
                let hasNewer = page.hasNewer
                if !hasNewer && postersDone { break }
                if !hasNewer { postersDone = group.wait(timeout: .now() + .milliseconds(5)) == .success }
            }
            #expect(group.wait(timeout: .now() + .seconds(60)) == .success)
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")

            // Walk down with `before` from the newest page to the first message.
            var downward: [Int64] = []
            var target = "/v1/conversations/g1/messages?limit=9"
            for _ in 0..<10_000 {
                let page = try walker.get(target).decode(HistoryPage.self)
                downward = page.messages.map(\.id) + downward
                guard page.hasOlder, let oldest = page.oldestID else { break }
                target = "/v1/conversations/g1/messages?limit=9&before=\(oldest)"
            }

            let total = 1 + 40 + Self.posters * Self.postsPerPoster
            let conversation = try walker.get("/v1/conversations/g1").decode(HistoryConversation.self)
            #expect(conversation.messageCount == Int64(total))
            #expect(downward.count == total)
            #expect(Set(downward).count == total)
            #expect(downward == downward.sorted())
            #expect(downward.first == start)
            // The upward walk, made while posts were landing, holds every message after `start` exactly once.
            #expect(upward == Array(downward.dropFirst()))
        }
    }
}
