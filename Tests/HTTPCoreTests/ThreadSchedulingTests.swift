import Glibc
import HistoryTestSupport
import Testing
@testable import HTTPCore

/// The server's request threads run under `SCHED_BATCH`, and only they:
/// each sets the policy on itself (`ThreadScheduling`).
@Suite struct ThreadSchedulingTests {
    @Test func requestsAreHandledOnBatchThreadsAndTheMainThreadIsLeftAlone() throws {
        try withLoopbackServer(threadCount: 3) { server in
            for _ in 0..<3 {
                let client = try server.client()
                try client.send(get("/policy"))
                #expect(try client.receive().bodyText == "batch")
            }
            let workers = ProcessThreads.ids(namedWithPrefix: "http-worker-")
            #expect(workers.count >= 3)
            #expect(workers.allSatisfy { ThreadScheduling.isBatch(threadID: $0) != false })
        }
        #expect(ThreadScheduling.isBatch(threadID: getpid()) == false)
    }

    @Test func aThreadThatDoesNotExistHasNoPolicy() {
        // Above any pid_max the kernel allows (2^22).
        #expect(ThreadScheduling.isBatch(threadID: Int32.max) == nil)
    }
}
