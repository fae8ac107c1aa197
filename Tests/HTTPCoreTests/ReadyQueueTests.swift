import Foundation
import HistoryTestSupport
import Synchronization
import Testing
@testable import HTTPCore

/// The ready queue (`ConnectionWorkers.runReady`): answers that come from
/// other threads are run by one thread in batches, and a run that blocks
/// hands the rest of its batch on, so no answer waits behind it.
@Suite struct ReadyQueueTests {
    /// Both threads are kept busy while twelve answers are released, so
    /// one thread takes them as one batch. The first connection has a
    /// second request pipelined, which blocks as a slow read does; the
    /// eleven answers behind it in the batch must reach their clients
    /// while it blocks.
    @Test func aBlockedRunHandsTheRestOfItsReadyBatchOn() throws {
        try withLoopbackServer(threadCount: 2, blockingThreadLimit: 1) { server in
            let responder = server.responder
            defer { responder.openBlocking() }
            let first = try server.client()
            try first.send(get("/deferred"))
            try first.send(get("/blocking"))
            #expect(server.eventually { responder.deferredCount == 1 })
            var others: [HTTPClientConnection] = []
            for _ in 0..<11 {
                let client = try server.client()
                try client.send(get("/deferred"))
                others.append(client)
            }
            #expect(server.eventually { responder.deferredCount == 12 })

            // Both threads asleep in handlers while the answers queue up
            // (the second sent once the first sleeps, so that the other
            // thread takes it).
            var busy: [HTTPClientConnection] = []
            for sleeping in 1...2 {
                let client = try server.client()
                try client.send(get("/busy?ms=600"))
                busy.append(client)
                #expect(server.eventually { responder.busyNow.load(ordering: .relaxed) == sleeping })
            }
            responder.releaseDeferred()

            var bodies: Set<String> = []
            for client in others {
                let answer = try client.receive()
                #expect(answer.status == 200)
                bodies.insert(answer.bodyText)
            }
            #expect(bodies == Set((1...11).map { "deferred \($0)" }))
            // The first connection's pipelined request is held at its
            // gate, on the thread that took the batch.
            #expect(server.eventually { responder.blockedCount.load(ordering: .relaxed) == 1 })
            // Its earlier answer went out before that request ran.
            #expect(try first.receive().bodyText == "deferred 0")
            responder.openBlocking()
            #expect(try first.receive().bodyText == "unblocked")
            for client in busy { #expect(try client.receive().status == 200) }
        }
    }
}
