import Dispatch
import Foundation
import HistoryTestSupport
import Synchronization
import Testing
@testable import HTTPCore

/// Connections share event loops (one serial queue and epoll set each), so
/// these tests put many connections on few loops and check that none waits
/// for another.
@Suite("Loopback: event loops")
struct EventLoopTests {
    @Test(arguments: [0, 1])
    func aStalledClientOnTheSameLoopDoesNotDelayAnother(loops: Int) throws {
        // 0 loops asked for means one: the server must still serve.
        try withLoopbackServer(threadCount: loops) { running in
            let stalled = try running.stalledClients()
            defer { for client in stalled { client.close() } }
            let held = try running.client()
            defer { held.close() }
            try held.send(get("/hold"))  // parked, like a long-poll
            let other = try running.client(timeout: .seconds(5))
            defer { other.close() }
            for index in 0..<50 {
                let response = try other.request(get("/fast/\(index)"))
                #expect(response.status == 200)
                #expect(String(decoding: response.body, as: UTF8.self) == "GET /fast/\(index)")
            }
        }
    }

    @Test func manyConnectionsOnFewLoopsAreAllAnsweredInOrder() throws {
        try withLoopbackServer(threadCount: 2) { running in
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                do {
                    let client = try running.client()
                    defer { client.close() }
                    for round in 0..<20 {
                        // Two pipelined, the first answered later from another queue.
                        try client.send(get("/slow?ms=\(round % 3)"))
                        try client.send(get("/w\(worker)/r\(round)"))
                        let slow = try client.receive()
                        let fast = try client.receive()
                        let slowBody = String(decoding: slow.body, as: UTF8.self)
                        let fastBody = String(decoding: fast.body, as: UTF8.self)
                        if slowBody != "slow \(round % 3)" || fastBody != "GET /w\(worker)/r\(round)" {
                            failures.withLock { $0.append("worker \(worker) round \(round): \(slowBody) / \(fastBody)") }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("worker \(worker): \(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(running.eventually { running.server.openConnectionCount == 0 })
        }
    }

    @Test func aPeerHangingUpWhileItsRequestIsHeldIsNoticedOnASharedLoop() throws {
        try withLoopbackServer(threadCount: 1) { running in
            let neighbour = try running.client()
            defer { neighbour.close() }
            #expect(try neighbour.request(get("/before")).status == 200)
            let before = running.responder.handled.withLock { $0 }
            for index in 1...5 {
                let leaving = try running.client()
                try leaving.send(get("/hold"))
                #expect(running.eventually { running.responder.handled.withLock { $0 } == before + index })
                leaving.close()
            }
            #expect(running.eventually { running.responder.closeHandlersRun.withLock { $0 } == 5 })
            #expect(running.eventually { running.server.openConnectionCount == 1 })
            #expect(try neighbour.request(get("/after")).status == 200)
        }
    }
}
