import Foundation
import HTTPCore

/// What one `abuse` does, as values (the command and the tests build it).
struct AbusePlan: Sendable {
    var endpoint: ServerEndpoint
    var attacks: [Attack] = Attack.allCases
    /// How long the normal users load the server in each phase, beside the attack.
    var attackDuration: Duration = .seconds(10)
    /// Scrollback users (closed loop), one keep-alive connection each.
    var population = 32
    /// Normal posters beside them, open loop at `postRate` per second in all.
    var posters = 4
    var postRate = 20.0
    var slowloris = 1_000
    var idle = 1_000
    var nonReaders = 100
    /// The `limit` each non-reader asks for (200: the largest page there is;
    /// tests ask for less, since a debug server takes seconds to build one).
    var nonReaderLimit = 200
    /// Requests each non-reader writes, pipelined, before it only waits.
    var nonReaderRequests = 4
    var longPolls = 5_000
    /// Long-polls per attacking client (address and token): a server's per-client cap sees this many at once.
    var pollsPerClient = 100
    /// Sockets of the one bad-tokens client.
    var badTokenSockets = 32
    /// Slowloris: one byte per socket this often.
    var drip: Duration = .seconds(2)
    var liveConversations = 4
    var pageSize = 50
    /// The server's process; nil: found from the port when this machine shows it.
    var serverPID: Int32?
    var credentials: LoadCredentials?
    /// A line on stderr as each phase starts.
    var progress = true
}

/// Runs a plan: prepares what the attacks need, loads the server with the
/// normal users alone, then beside each attack in turn (each attack's
/// sockets opened first, closed before the next), sampling the server's
/// memory through every phase, and builds the report.
enum AbuseRun {
    static func execute(_ plan: AbusePlan) throws -> AbuseReport {
        guard LoopbackAddress.isLoopback(plan.endpoint.host) else {
            throw LoadError("\(plan.endpoint) is not on this machine: abuse attacks loopback servers only")
        }
        // HTTPCore: thousands of attack sockets, one descriptor each.
        let openFiles = raiseOpenFileLimit()
        let largestAttack = plan.attacks.map { attack in
            switch attack {
            case .slowloris: plan.slowloris
            case .idle: plan.idle
            case .nonReaders: plan.nonReaders
            case .longPolls: plan.longPolls
            case .flood: 1
            case .badTokens: plan.badTokenSockets
            }
        }.max() ?? 0
        let needed = plan.population + plan.posters + 64 + largestAttack
        if openFiles >= 0 && openFiles < needed {
            ProgressPrinter.stderr("abuse: warning: the open-file limit is \(openFiles), a phase needs about \(needed): "
                                   + "sockets past it count as refused (raise it with ulimit -n)\n")
        }
        let admin = plan.credentials?.adminAuthorization()
        let catalog = try ConversationCatalog.discover(endpoint: plan.endpoint, prefix: "load-", maximum: 100_000,
                                                       authorization: admin)
        guard !catalog.nonEmpty.isEmpty else {
            throw LoadError("no conversation load-0000 on \(plan.endpoint): run `history-load seed` first")
        }
        let live = catalog.live(plan.liveConversations)
        let pid = plan.serverPID ?? ServerMemory.pid(listeningOn: plan.endpoint.port)

        let pollerClients = (plan.longPolls + plan.pollsPerClient - 1) / max(1, plan.pollsPerClient)
        var members: [String: [String]] = [:]
        if plan.credentials != nil {
            if plan.attacks.contains(.nonReaders) {
                members[AbuseSetup.bigConversation] = (0..<plan.nonReaders).map(AbuseSetup.readerSubject)
            }
            if plan.attacks.contains(.longPolls) {
                for entry in live { members[entry.id] = (0..<pollerClients).map(AbuseSetup.pollerSubject) }
            }
            if plan.attacks.contains(.flood) { members[AbuseSetup.floodConversation] = [AbuseSetup.floodSubject] }
        }
        if plan.progress { ProgressPrinter.stderr("abuse: preparing \(AbuseSetup.bigConversation) and the attackers\n") }
        let bigText = try AbuseSetup(endpoint: plan.endpoint, authorization: admin)
            .prepare(big: plan.attacks.contains(.nonReaders), flood: plan.attacks.contains(.flood), members: members)

        var phases: [AbusePhase] = []
        for attack in [nil] + plan.attacks.map(Optional.some) {
            if plan.progress { ProgressPrinter.stderr("abuse: \(AbusePhase.name(of: attack, plan)) for \(Format.fixed(plan.attackDuration.secondsDouble, 1)) s\n") }
            let swarm = attack.map { AttackSwarm(settings: swarmSettings($0, plan, live: live, pollerClients: pollerClients)) }
            phases.append(try runPhase(attack, swarm: swarm, plan: plan, catalog: catalog, pid: pid))
        }
        return AbuseReport(plan: plan, serverPID: pid, bigConversation: bigText, phases: phases)
    }

    /// One phase: the attack's sockets opened (at most 15 s), the normal
    /// users for the phase's duration beside them, the sockets closed, and a
    /// half-second for the server to notice before the next phase.
    private static func runPhase(_ attack: Attack?, swarm: AttackSwarm?, plan: AbusePlan, catalog: ConversationCatalog,
                                 pid: Int32?) throws -> AbusePhase {
        let sampler = pid.map { ResidentMemorySampler(pid: $0) }
        let finished = DispatchSemaphore(value: 0)
        if let swarm {
            Thread {
                swarm.run()
                finished.signal()
            }.start()
            let deadline = MonotonicClock.now() + 15_000_000_000
            while !swarm.isReady && MonotonicClock.now() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        }
        let report: LoadReport
        do {
            report = try LoadRun.execute(populationPlan(plan), catalog: catalog)
        } catch {
            swarm?.stop()
            if swarm != nil { finished.wait() }
            _ = sampler?.stop()
            throw error
        }
        swarm?.stop()
        if swarm != nil { finished.wait() }
        let peak = sampler?.stop()
        Thread.sleep(forTimeInterval: 0.5)
        return AbusePhase(attack: attack, name: AbusePhase.name(of: attack, plan), report: report, outcome: swarm?.outcome,
                          peakRSSBytes: peak)
    }

    /// The normal users: scrollback screens in closed loop, posters on a schedule.
    static func populationPlan(_ plan: AbusePlan) -> LoadPlan {
        var load = LoadPlan(endpoint: plan.endpoint, scenario: .scrollback, clients: plan.population + plan.posters,
                            duration: plan.attackDuration)
        load.roles = Array(repeating: LoadRun.Role(scenario: .scrollback, paced: false), count: plan.population)
            + Array(repeating: LoadRun.Role(scenario: .post, paced: true, rate: plan.postRate / Double(max(1, plan.posters))),
                    count: plan.posters)
        load.progress = false
        load.settings.pageSize = plan.pageSize
        load.settings.liveConversations = plan.liveConversations
        load.settings.credentials = plan.credentials
        return load
    }

    /// A token the server's key did not sign: a real one (in tokens mode)
    /// with its signature's last characters changed, so it passes every
    /// check before the signature's.
    static func forgedAuthorization(_ credentials: LoadCredentials?) -> String {
        guard let credentials else { return "Bearer not.a.token" }
        let token = credentials.signer.token(subject: "abuse-forger", lifetime: credentials.lifetime,
                                             now: LoadCredentials.now())
        return "Bearer " + token.dropLast(4) + (token.hasSuffix("AAAA") ? "BBBB" : "AAAA")
    }

    static func swarmSettings(_ attack: Attack, _ plan: AbusePlan, live: [ConversationCatalog.Entry],
                              pollerClients: Int) -> SwarmSettings {
        var settings = SwarmSettings(attack: attack, endpoint: plan.endpoint, sockets: 0, socketsPerClient: 1)
        func tokens(_ subjects: [String]) -> [String] {
            guard let credentials = plan.credentials else { return [] }
            return subjects.map {
                "Bearer " + credentials.signer.token(subject: $0, lifetime: credentials.lifetime, now: LoadCredentials.now())
            }
        }
        switch attack {
        case .slowloris:
            settings.sockets = plan.slowloris
            settings.socketsPerClient = plan.slowloris
            settings.dripNanoseconds = plan.drip.nanoseconds
        case .idle:
            settings.sockets = plan.idle
            settings.socketsPerClient = plan.idle
        case .nonReaders:
            settings.sockets = plan.nonReaders
            settings.target = "/v1/conversations/\(AbuseSetup.bigConversation)/messages?limit=\(plan.nonReaderLimit)"
            settings.pipelined = plan.nonReaderRequests
            settings.authorizations = tokens((0..<plan.nonReaders).map(AbuseSetup.readerSubject))
        case .longPolls:
            settings.sockets = plan.longPolls
            settings.socketsPerClient = plan.pollsPerClient
            settings.pollConversations = live.map { ($0.eventsPrefix, $0.version) }
            settings.pollWait = min(60, max(1, Int(plan.attackDuration.secondsDouble.rounded(.up)) + 5))
            settings.authorizations = tokens((0..<pollerClients).map(AbuseSetup.pollerSubject))
        case .flood:
            settings.sockets = 1
            settings.target = "/v1/conversations/\(AbuseSetup.floodConversation)/messages"
            settings.body = Array(#"{"sender":"\#(AbuseSetup.floodSubject)","body":"flood"}"#.utf8)
            settings.authorizations = tokens([AbuseSetup.floodSubject])
        case .badTokens:
            settings.sockets = plan.badTokenSockets
            settings.socketsPerClient = plan.badTokenSockets
            settings.target = "/v1/conversations/load-0000/messages?limit=\(plan.pageSize)"
            settings.authorizations = [forgedAuthorization(plan.credentials)]
        }
        return settings
    }
}
