import Dispatch
import Foundation
import Glibc
import HTTPCore
import HistoryAPI
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import Synchronization
import Testing

/// Reads never hold up other connections: a real server, over a real
/// SQLite store whose page reads of conversation `slow` wait at a gate the
/// test opens (`GatedStore`), so a read is slow for exactly as long as the
/// test says, with no timing in any assertion. A server of one thread lets
/// no thread block, so every read goes to the read pool; a server with a
/// blocking limit runs reads on its own threads up to that limit, and the
/// pool takes the rest.
@Suite("Reads on the server's threads and on the read pool")
struct ReadPoolTests {
    /// The pool's threads run under `SCHED_BATCH`, as the HTTP workers do
    /// (`ThreadScheduling`): a job sees it on its own thread.
    @Test func itsThreadsRunAsBatch() {
        let pool = ReadPool(threads: 2, name: "policy-check")
        defer { pool.stop() }
        let seen = Mutex<[Bool?]>([])
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<4 {
            pool.submit {
                seen.withLock { $0.append(ThreadScheduling.isBatch(threadID: 0)) }
                done.signal()
            }
        }
        for _ in 0..<4 { #expect(done.wait(timeout: .now() + 60) == .success) }
        #expect(seen.withLock { $0 } == [true, true, true, true])
        // Both threads exist from the start, but one may not have named
        // itself yet when the other has run all four jobs.
        let deadline = Date().addingTimeInterval(10)
        while ProcessThreads.ids(namedWithPrefix: "policy-check-").count < 2 && Date() < deadline { usleep(1_000) }
        let threads = ProcessThreads.ids(namedWithPrefix: "policy-check-")
        #expect(threads.count == 2)
        #expect(threads.allSatisfy { ThreadScheduling.isBatch(threadID: $0) == true })
    }

    /// Before the read pool, the second connection's answer waited for the
    /// gated read on the same loop: this test then hung until its client
    /// timed out.
    @Test func aSlowReadDoesNotDelayAnotherConnectionOnTheSameLoop() throws {
        try withGatedServer(readThreads: 2) { store, port, _ in
            let slow = try HTTPClientConnection(port: port)
            try slow.send(HTTPRequest(method: .get, target: "/v1/conversations/slow/messages"))
            #expect(eventually { store.enteredCount == 1 })

            let other = try HTTPClientConnection(port: port)
            let fast = try other.get("/v1/conversations/fast/messages")
            #expect(fast.status == 200)
            #expect(fast.bodyText.contains("in fast"))
            let health = try other.get("/healthz")
            #expect(health.status == 200)
            #expect(store.enteredCount == 1)

            store.open()
            let answer = try slow.receive()
            #expect(answer.status == 200)
            #expect(answer.bodyText.contains("in slow"))
        }
    }

    /// Requests pipelined behind a gated read, some for the pool and some
    /// answered on the loop (`/metrics`, a 404), come back in request order.
    @Test func pipelinedRequestsAreAnsweredInOrderWhenSomeGoToThePool() throws {
        try withGatedServer(readThreads: 2) { store, port, _ in
            let connection = try HTTPClientConnection(port: port)
            let targets = ["/v1/conversations/slow/messages", "/metrics", "/v1/conversations/fast/messages",
                           "/nope", "/v1/conversations/slow/messages?limit=1", "/healthz"]
            var raw = ""
            for target in targets { raw += "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }
            try connection.sendRaw(raw)
            #expect(eventually { store.enteredCount == 1 })
            // The loop still answers others meanwhile.
            #expect(try HTTPClientConnection(port: port).get("/metrics").status == 200)

            store.open()
            let answers = try targets.map { _ in try connection.receive() }
            #expect(answers.map(\.status) == [200, 200, 200, 404, 200, 200])
            #expect(answers[0].bodyText.contains("in slow"))
            #expect(answers[1].bodyText.contains("# TYPE"))
            #expect(answers[2].bodyText.contains("in fast"))
            #expect(answers[4].bodyText.contains("in slow"))
            #expect(answers[5].bodyText.contains("ok"))
        }
    }

    /// The pool's queue holds at most one job per connection: twenty
    /// requests pipelined on one connection wait in its input, not in the
    /// pool, while five other connections' requests queue behind the one
    /// running read. All are answered once the read goes through.
    /// (`before` pages: a newest page would be answered from the one kept
    /// by the first read, and the count of reads would not be 25.)
    @Test func thePoolQueueHoldsAtMostOneRequestPerConnection() throws {
        try withGatedServer(readThreads: 1) { store, port, api in
            let pipelined = try HTTPClientConnection(port: port)
            let request = "GET /v1/conversations/slow/messages?before=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            try pipelined.sendRaw(String(repeating: request, count: 20))
            var others: [HTTPClientConnection] = []
            for _ in 0..<5 {
                let connection = try HTTPClientConnection(port: port)
                try connection.send(HTTPRequest(method: .get, target: "/v1/conversations/slow/messages?before=1000"))
                others.append(connection)
            }
            #expect(eventually { store.enteredCount == 1 && api.readPoolQueuedCount >= 5 })
            // A round trip through the same loop after every request above
            // was sent; /metrics answers on the loop, and reports the queue.
            let metrics = try HTTPClientConnection(port: port).get("/metrics")
            #expect(metrics.bodyText.contains("history_read_pool_queued 5\n"))
            #expect(api.readPoolQueuedCount == 5)
            #expect(store.enteredCount == 1)

            store.open()
            for _ in 0..<20 { #expect(try pipelined.receive().status == 200) }
            for connection in others { #expect(try connection.receive().status == 200) }
            #expect(store.enteredCount == 25)
            #expect(api.readPoolQueuedCount == 0)
        }
    }

    /// A read runs on the server's thread that read its request, and while
    /// it waits the other threads answer everyone else.
    @Test func aSlowReadOnAServerThreadDoesNotDelayAnotherConnection() throws {
        try withGatedServer(readThreads: 2, threadCount: 3, blockingThreadLimit: 2) { store, port, api in
            let slow = try HTTPClientConnection(port: port)
            try slow.send(HTTPRequest(method: .get, target: "/v1/conversations/slow/messages"))
            #expect(eventually { store.enteredCount == 1 })
            #expect(store.enteredThreads.allSatisfy { $0.hasPrefix("http-worker-") })

            let other = try HTTPClientConnection(port: port)
            for _ in 0..<5 {
                let fast = try other.get("/v1/conversations/fast/messages")
                #expect(fast.status == 200)
                #expect(fast.bodyText.contains("in fast"))
            }
            #expect(try other.get("/healthz").status == 200)
            #expect(store.enteredCount == 1)
            #expect(api.readPoolQueuedCount == 0)

            store.open()
            let answer = try slow.receive()
            #expect(answer.status == 200)
            #expect(answer.bodyText.contains("in slow"))
        }
    }

    /// A worker takes up to 16 ready sockets per `epoll_wait`; before it
    /// blocks in a read, it hands the ones it has not served to the other
    /// threads. Requests sent together on many connections, the gated one
    /// first, all reach the server at once, so the blocked worker's batch
    /// likely holds some of them: each must still be answered while the
    /// read waits.
    @Test func requestsTakenWithASlowReadAreHandedToOtherThreads() throws {
        try withGatedServer(readThreads: 2, threadCount: 2, blockingThreadLimit: 1) { store, port, _ in
            let slow = try HTTPClientConnection(port: port)
            var others: [HTTPClientConnection] = []
            for _ in 0..<12 { others.append(try HTTPClientConnection(port: port)) }
            try slow.send(HTTPRequest(method: .get, target: "/v1/conversations/slow/messages"))
            for connection in others {
                try connection.send(HTTPRequest(method: .get, target: "/v1/conversations/fast/messages"))
            }
            for connection in others {
                let answer = try connection.receive()
                #expect(answer.status == 200)
                #expect(answer.bodyText.contains("in fast"))
            }
            // The gated read may reach its gate after the others were
            // answered (a loaded machine); it must still be held there.
            #expect(eventually { store.enteredCount == 1 })
            store.open()
            #expect(try slow.receive().bodyText.contains("in slow"))
        }
    }

    /// Past the blocking limit a read goes to the read pool, so the
    /// threads left never block: with one thread allowed to block and it
    /// blocked, a second slow read waits on the pool, and a third
    /// connection is still answered (its read on the pool's other thread).
    @Test func readsPastTheBlockingLimitGoToThePool() throws {
        try withGatedServer(readThreads: 2, threadCount: 2, blockingThreadLimit: 1) { store, port, _ in
            let first = try HTTPClientConnection(port: port)
            try first.send(HTTPRequest(method: .get, target: "/v1/conversations/slow/messages"))
            #expect(eventually { store.enteredCount == 1 })
            let second = try HTTPClientConnection(port: port)
            try second.send(HTTPRequest(method: .get, target: "/v1/conversations/slow/messages?limit=1"))
            #expect(eventually { store.enteredCount == 2 })
            let threads = store.enteredThreads
            #expect(threads.count == 2)
            #expect(threads.first?.hasPrefix("http-worker-") == true)
            #expect(threads.last?.hasPrefix("read-pool-") == true)

            let third = try HTTPClientConnection(port: port)
            #expect(try third.get("/metrics").status == 200)
            let fast = try third.get("/v1/conversations/fast/messages")
            #expect(fast.status == 200)
            #expect(fast.bodyText.contains("in fast"))

            store.open()
            #expect(try first.receive().bodyText.contains("in slow"))
            #expect(try second.receive().bodyText.contains("in slow"))
        }
    }

    @Test func aPoolRunsAtMostItsThreadsAtOnceAndEveryJob() throws {
        let pool = ReadPool(threads: 2)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let ran = Atomic(0)
        for _ in 0..<5 {
            done.enter()
            pool.submit {
                gate.wait()
                ran.add(1, ordering: .relaxed)
                done.leave()
            }
        }
        #expect(eventually { pool.runningCount == 2 && pool.queuedCount == 3 })
        for _ in 0..<5 { gate.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(ran.load(ordering: .relaxed) == 5)
    }

    @Test func afterStopQueuedJobsStillRunAndNewOnesRunOnTheCaller() throws {
        let pool = ReadPool(threads: 1)
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        done.enter()
        pool.submit { gate.wait() }
        pool.submit { done.leave() }
        pool.stop()
        let caller = pthread_self()
        let ranHere = Mutex(false)
        pool.submit { ranHere.withLock { $0 = pthread_self() == caller } }
        #expect(ranHere.withLock { $0 })
        gate.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
    }
}

/// A server over a `GatedStore` gating `slow`, with one message in `slow`
/// ("in slow") and one in `fast` ("in fast"); with `keepsVersions`, the
/// store's kept versions reach the server. By default the server has one
/// thread, which never blocks: every read goes to the read pool.
func withGatedServer(readThreads: Int, threadCount: Int = 1, blockingThreadLimit: Int = 0, keepsVersions: Bool = false,
                     _ body: (GatedStore, Int, APIResponder) throws -> Void) throws {
    try withTemporaryDirectory { directory in
        let sqlite = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: directory.databasePath,
                                                                              durability: .normal))
        let store = GatedStore(sqlite, gating: ConversationID("slow")!, keepsVersions: keepsVersions)
        defer { store.close() }
        try withInProcessServer(store, readThreads: readThreads, threadCount: threadCount,
                                blockingThreadLimit: blockingThreadLimit, beforeShutdown: { store.open() }) { port, api in
            let setup = try HTTPClientConnection(port: port)
            for name in ["slow", "fast"] {
                #expect(try setup.post("/v1/conversations", #"{"id":"\#(name)"}"#).status == 201)
                let posted = try setup.post("/v1/conversations/\(name)/messages", #"{"sender":"ana","body":"in \#(name)"}"#)
                #expect(posted.status == 201)
            }
            try body(store, port, api)
        }
    }
}
