import Foundation
import HTTPCore
import Synchronization

/// What one `run` does, as values (the CLI and the bench suite build it).
struct LoadPlan: Sendable {
    var endpoint: ServerEndpoint
    var scenario: Scenario
    var clients: Int
    var duration: Duration
    /// Total requests per second for open loop; nil is closed loop.
    var rate: Double?
    var mix = MixWeights.standard
    /// `tail`: how many posting clients beside the readers.
    var writers: Int?
    /// `tail`, `inbox`: the writers post through this server instead of
    /// `endpoint`, another instance on the same database: delivery then
    /// crosses instances (parked on one, posted through the other).
    var writerEndpoint: ServerEndpoint?
    /// Extra idle keep-alive connections held open during the run.
    var idleConnections = 0
    var settings = RunSettings()
    var conversationPrefix = "load-"
    var maximumConversations = 100_000
    /// Print a progress line each second on stderr.
    var progress = true
    /// How the users' requests go out.
    var transport = Transport.loop
    /// Event-loop threads; nil is one per CPU.
    var loopThreads: Int?
    /// The users exactly, instead of the ones `scenario` makes (`abuse`:
    /// closed-loop scrollback readers beside open-loop posters).
    var roles: [LoadRun.Role]?
    /// Readers that open a page each before the writers start (as `tail`'s do),
    /// for plans whose `roles` are given: the writers wait for them.
    var warmupReaders = 0
    /// Cuts the run into segments: the users with a rate of their own send
    /// in every other one, and each boundary is sampled (`run --scenario
    /// typing`). `duration` must be theirs (`RunSegments.duration`).
    var segments: RunSegments?
}

/// Runs a plan: discovers the conversations, starts the event loops that
/// drive the virtual users (or one thread per user), prints progress each
/// second, stops at the deadline, reads back the acked posts, and builds the report.
enum LoadRun {
    static func execute(_ plan: LoadPlan, catalog knownCatalog: ConversationCatalog? = nil) throws -> LoadReport {
        _ = raiseOpenFileLimit()   // HTTPCore: one descriptor per connection
        // `get` loads any HTTP server: nothing to discover.
        // The tool's own requests (discovery, read-back) see everything: an admin token.
        let adminAuthorization = plan.settings.credentials?.adminAuthorization()
        let catalog = plan.scenario == .get ? ConversationCatalog(entries: []) : try knownCatalog ?? ConversationCatalog.discover(
            endpoint: plan.endpoint, prefix: plan.conversationPrefix, maximum: plan.maximumConversations,
            authorization: adminAuthorization)
        guard !catalog.entries.isEmpty || plan.scenario == .get else {
            throw LoadError("no conversation \(plan.conversationPrefix)0000 on \(plan.endpoint): run `history-load seed` first")
        }
        if plan.scenario == .inbox && plan.roles == nil {
            try InboxPreflight.check(plan, authorization: adminAuthorization)
        }
        let roles = self.roles(for: plan)
        let stats = LoadStats(shardCount: min(64, max(1, roles.count)))
        let idle = IdleHolder(count: plan.idleConnections, endpoint: plan.endpoint)
        let idleOpened = idle.open()
        defer { idle.close() }

        let control = RunControl(duration: plan.duration)
        plan.segments?.sample(stats)
        // Open loop: the rate is shared by the users that send on a schedule.
        let pacedCount = roles.filter(\.paced).count
        let writerWarmup = Self.writerWarmup(readers: plan.scenario == .tail ? plan.clients : plan.warmupReaders)
        var contexts: [UserContext] = []
        for (index, role) in roles.enumerated() {
            var pacer: Pacer?
            if role.paced, let rate = role.rate ?? plan.rate.map({ $0 / Double(max(1, pacedCount)) }) {
                pacer = Pacer(rate: rate, start: control.startNanos + (role.rate != nil ? writerWarmup : 0), phase: Double(index % max(1, pacedCount)) / Double(max(1, pacedCount)))
                if role.rate != nil { pacer?.pauses = plan.segments?.pauses(start: control.startNanos) }
            }
            // Only the writers beside readers (their own rate, or the feed's) post elsewhere.
            let besideReaders = role.rate != nil || plan.scenario == .feed
            let endpoint = besideReaders && role.scenario == .post ? plan.writerEndpoint ?? plan.endpoint : plan.endpoint
            contexts.append(UserContext(index: index, endpoint: endpoint, stats: stats, control: control,
                                        catalog: catalog, settings: plan.settings, pacer: pacer))
        }

        var threadWork: [UserThreadWork] = []
        var callbackUsers: [(context: UserContext, user: any CallbackUser)] = []
        for (context, role) in zip(contexts, roles) {
            if plan.transport == .threads {
                threadWork.append(UserThreadWork(context: context, user: role.makeUser(index: context.index)))
            } else {
                callbackUsers.append((context, role.makeUser(index: context.index)))
            }
        }
        let loopCount = min(callbackUsers.count, max(1, plan.loopThreads ?? ProcessInfo.processInfo.activeProcessorCount))
        let loopWork = (0..<loopCount).map { loop in
            LoopThreadWork(endpoint: plan.endpoint, control: control,
                           users: stride(from: loop, to: callbackUsers.count, by: loopCount).map { callbackUsers[$0] })
        }

        let group = DispatchGroup()
        for work in threadWork {
            group.enter()
            let thread = Thread {
                work.run()
                group.leave()
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
        for work in loopWork {
            group.enter()
            let thread = Thread {
                work.run()
                group.leave()
            }
            thread.start()
        }

        let progress = ProgressPrinter(enabled: plan.progress)
        var nextLine = control.startNanos + 1_000_000_000
        var nextBoundary = 1
        while true {
            let boundary = plan.segments.flatMap { nextBoundary <= $0.count ? $0.boundary(nextBoundary, start: control.startNanos) : nil }
            let wake = min(nextLine, boundary ?? .max), now = MonotonicClock.now()
            if group.wait(timeout: .now() + .nanoseconds(Int(wake > now ? wake - now : 0))) == .success { break }
            let woken = MonotonicClock.now()
            if let boundary, woken >= boundary {
                plan.segments?.sample(stats)
                nextBoundary += 1
            }
            if woken >= nextLine {
                nextLine += 1_000_000_000
                let interval = stats.takeInterval()
                progress.line(elapsed: Double(woken - control.startNanos) / 1e9, interval: interval,
                              violations: stats.invariants.totalViolations)
            }
        }
        // The last boundary when the users ended before the wait saw it.
        if let segments = plan.segments, nextBoundary <= segments.count { segments.sample(stats) }
        progress.finish()
        if let failure = loopWork.compactMap(\.failure).first { throw LoadError(failure) }
        let measured = Double(MonotonicClock.now() - control.startNanos) / 1e9

        let acks = contexts.flatMap(\.acks)
        let readBack = ReadBack.verify(acks, catalog: catalog, liveCount: plan.settings.liveConversations,
                                       endpoint: plan.endpoint, stats: stats, authorization: adminAuthorization)
        return LoadReport(plan: plan, catalog: catalog, roles: roles, elapsedSeconds: min(measured, plan.duration.secondsDouble),
                          wallSeconds: measured, snapshot: stats.snapshot(), invariants: stats.invariants,
                          readBack: readBack, idleConnectionsOpen: idleOpened)
    }

    /// What each virtual user does.
    struct Role: Sendable {
        var scenario: Scenario
        /// Sends on the open-loop schedule when a rate is set.
        var paced: Bool
        /// A rate of its own (tail writers), per user.
        var rate: Double?
        /// Makes the user instead of `scenario` (the bench's inbox rows), given its index.
        var make: (@Sendable (_ index: Int) -> any CallbackUser)? = nil

        func makeUser(index: Int) -> any CallbackUser {
            if let make { return make(index) }
            return switch scenario {
            case .scrollback: ScrollbackUser()
            case .deep, .mix: DeepUser()
            case .typing: TypingUser()
            case .newest: NewestUser()
            case .short: ShortUser()
            case .jump: JumpUser()
            case .post: PostUser()
            case .tail: TailReader()
            case .inbox: InboxUser()
            case .get: GetUser()
            case .revalidate: RevalidateUser()
            case .streams: preconditionFailure("streams runs through StreamsRun, not the load loop")
            case .feed: preconditionFailure("feed readers are made by ServerFeedRun, with their ledger")
            }
        }
    }

    /// How long `tail` writers wait before their first post: the readers
    /// first read a newest page each (thousands of them at once), and a post
    /// queued behind that burst would charge the start-up to delivery latency.
    static func writerWarmup(readers: Int) -> UInt64 {
        min(5_000_000_000, UInt64(readers) * 300_000)
    }

    static func roles(for plan: LoadPlan) -> [Role] {
        if let roles = plan.roles { return roles }
        switch plan.scenario {
        case .tail:
            // Readers park; writers post at the plan's rate (default 100/s in total).
            let writers = max(1, plan.writers ?? max(1, plan.clients / 8))
            let rate = (plan.rate ?? 100) / Double(writers)
            return Array(repeating: Role(scenario: .tail, paced: false), count: plan.clients)
                + Array(repeating: Role(scenario: .post, paced: true, rate: rate), count: writers)
        case .inbox:
            // Inbox users read as fast as they can; writers post at the plan's rate (default 20/s in total).
            let writers = max(1, plan.writers ?? max(1, plan.clients / 4))
            let rate = (plan.rate ?? 20) / Double(writers)
            return Array(repeating: Role(scenario: .inbox, paced: false), count: plan.clients)
                + Array(repeating: Role(scenario: .post, paced: true, rate: rate), count: writers)
        case .revalidate where plan.writers != nil:
            // Reopening users as fast as they can; writers post at the plan's rate (default 20/s in total),
            // so some conversations change between two visits.
            let writers = max(1, plan.writers ?? 1)
            let rate = (plan.rate ?? 20) / Double(writers)
            return Array(repeating: Role(scenario: .revalidate, paced: false), count: plan.clients)
                + Array(repeating: Role(scenario: .post, paced: true, rate: rate), count: writers)
        case .mix:
            return plan.mix.assign(clients: plan.clients).map { Role(scenario: $0, paced: $0 != .tail && $0 != .inbox) }
        default:
            return Array(repeating: Role(scenario: plan.scenario, paced: true), count: plan.clients)
        }
    }
}

/// One virtual user and its context, handed to the thread that runs it.
///
/// The use of `@unchecked Sendable` is safe because: the value is created
/// before the thread starts and, from then on, touched by that one thread
/// only; the main thread reads `context.acks` only after the group says
/// every thread finished (DispatchGroup's leave/wait order the accesses).
final class UserThreadWork: @unchecked Sendable {
    let context: UserContext
    let user: any CallbackUser

    init(context: UserContext, user: any CallbackUser) {
        self.context = context
        self.user = user
    }

    func run() {
        let driver = BlockingDriver(connection: context.connection, control: context.control)
        context.driver = driver
        driver.drive(user, context)
        context.driver = nil
        context.flush()
        context.connection.reset()
    }
}

/// The callback users of one event-loop thread.
///
/// The use of `@unchecked Sendable` is safe because: the value and its users
/// are created before the thread starts and, from then on, touched by that
/// one thread only; the main thread reads `failure` and the users' contexts
/// only after the group says every thread finished (DispatchGroup's
/// leave/wait order the accesses).
final class LoopThreadWork: @unchecked Sendable {
    let endpoint: ServerEndpoint
    let control: RunControl
    let users: [(context: UserContext, user: any CallbackUser)]
    private(set) var failure: String?

    init(endpoint: ServerEndpoint, control: RunControl, users: [(context: UserContext, user: any CallbackUser)]) {
        self.endpoint = endpoint
        self.control = control
        self.users = users
    }

    func run() {
        let loop: EventLoop
        do {
            loop = try EventLoop(control: control)
        } catch {
            failure = "\(error)"
            return
        }
        for (context, user) in users {
            context.driver = LoopConnection(loop: loop, endpoint: context.connection.endpoint, shard: context.shard,
                                            pacer: context.connection.pacer,
                                            authorization: context.authorization,
                                            acceptsGzip: context.settings.acceptsGzip)
            user.run(context)
        }
        loop.run()
        for (context, _) in users {
            context.flush()
            // The connection's pending callbacks hold the context: break the cycle.
            context.driver = nil
        }
    }
}
