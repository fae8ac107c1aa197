import Testing
@testable import HistoryLoad

/// The two transports against the real server: the event loops carry many
/// users per thread, the blocking one a thread per user; both must check
/// and count the same way.
@Suite("Transports against history-server", .serialized)
struct TransportTests {
    @Test(arguments: [Transport.loop, .threads])
    func deepPagesOnEitherTransport(_ transport: Transport) throws {
        try withSeededServer { server, _ in
            var plan = quickPlan(server.endpoint, .deep, clients: 6)
            plan.transport = transport
            plan.loopThreads = 2
            let report = try LoadRun.execute(plan)
            #expect(report.requests > 0)
            #expect(report.checks["pages checked", default: 0] > 0)
            #expect(report.violationCount == 0, "\(report.text)")
            #expect(report.errorCount == 0, "\(report.errors)")
        }
    }

    /// More parked long-polls than loop threads by far: every reader is a
    /// state machine on one of two loops, and posts still reach them.
    @Test func manyParkedLongPollsOnTwoLoops() throws {
        try withSeededServer { server, _ in
            var plan = quickPlan(server.endpoint, .tail, clients: 200)
            plan.writers = 2
            plan.rate = 50
            plan.loopThreads = 2
            let report = try LoadRun.execute(plan)
            #expect(report.violationCount == 0, "\(report.text)")
            #expect(report.errorCount == 0, "\(report.errors)")
            #expect(report.checks["events checked", default: 0] > report.ackedPosts)
            #expect(report.kinds.contains { $0.kind == RequestKind.delivery.name && $0.count > UInt64(report.ackedPosts) })
            #expect(report.ackedPostsReadable == report.ackedPosts)
        }
    }

    /// Open loop on the event loops: requests go out on the timer's schedule.
    @Test func openLoopOnTheEventLoops() throws {
        try withSeededServer { server, _ in
            var plan = quickPlan(server.endpoint, .newest, clients: 4)
            plan.rate = 200
            plan.loopThreads = 1
            let report = try LoadRun.execute(plan)
            // 2 s at 200/s, give or take the first and last slot of each user.
            #expect(report.requests >= 380 && report.requests <= 404)
            #expect(report.violationCount == 0)
        }
    }

    /// `get` needs no seeded conversations: any server's path, status checked.
    @Test func rawGetOfAFixedPath() throws {
        try withSeededServer { server, _ in
            var plan = quickPlan(server.endpoint, .get, clients: 3, seconds: 1)
            plan.settings.rawPath = "/healthz"
            let report = try LoadRun.execute(plan)
            #expect(report.requests > 0)
            #expect(report.kinds.first?.kind == RequestKind.raw.name)
            #expect(report.errorCount == 0, "\(report.errors)")

            plan.settings.rawPath = "/nowhere"
            let missing = try LoadRun.execute(plan)
            #expect(missing.errorCount > 0)
        }
    }

    @Test func idleConnectionsAreHeldOpen() throws {
        try withSeededServer { server, _ in
            var plan = quickPlan(server.endpoint, .newest, clients: 2, seconds: 1)
            plan.idleConnections = 50
            let report = try LoadRun.execute(plan)
            #expect(report.idleConnectionsOpen == 50)
            #expect(report.errorCount == 0, "\(report.errors)")
        }
    }
}
