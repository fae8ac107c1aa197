/// The bench's inbox rows (docs/performance.md, "Inbox"): the three costs
/// the inbox design promises to keep flat.
/// - An inbox page of a user with 10 conversations and of one with 10,000,
///   interleaved round by round like the page rows (goal: within 15%).
/// - Appends to a conversation with 1,000 members and to one with 2,
///   interleaved the same way (goal: within 10%: fan-out on read, the
///   post writes the same rows whatever the member count).
/// - 10,000 users parked on their inbox feeds while posts arrive in their
///   conversations: post-to-feed latency (goal: p99 < 50 ms) and the
///   server's peak RSS (goal: < 400 MB).
extension BenchSuite {
    struct InboxRows {
        var pages: [Row]
        var posts: [Row]
        var feed: Row
    }

    func inboxRows(log: (String) -> Void) throws -> InboxRows {
        let s = settings
        let url = s.endpoint.description
        let admin = s.baseline?.adminAuthorization()
        let setup = InboxBenchSetup(endpoint: s.endpoint, authorization: admin, small: s.inboxSmall, large: s.inboxLarge,
                                    crowd: s.crowdMembers, pollers: s.inboxPollers, feedConversations: s.inboxFeedConversations,
                                    membershipsPerPoller: s.membershipsPerPoller)
        try setup.prepare(log: log)

        func plan(_ catalog: ConversationCatalog, clients: Int, roles: [LoadRun.Role]? = nil) -> LoadPlan {
            var plan = LoadPlan(endpoint: s.endpoint, scenario: roles == nil ? .post : .inbox, clients: clients, duration: s.duration)
            plan.progress = s.progress
            plan.settings.credentials = s.baseline
            plan.settings.liveConversations = max(1, catalog.entries.count)
            plan.roles = roles
            return plan
        }
        func measure(_ name: String, _ plan: LoadPlan, catalog: ConversationCatalog, command: String, kind: RequestKind) throws -> Row {
            log("bench: \(name)")
            let report = try LoadRun.execute(plan, catalog: catalog)
            let row = report.kinds.first { $0.kind == kind.name }
            let violations = report.violationCount + report.ackedPostsMissing
            let extra = violations > 0 ? " **\(violations) violations**" : ""
            let errors = report.errorCount > 0 ? " (\(report.errorCount) errors)" : ""
            return Row(name: name, command: command, report: report, rate: row?.perSecond ?? 0, p50: row?.p50Ms ?? 0,
                       p99: row?.p99Ms ?? 0, p999: row?.p999Ms ?? 0, note: extra + errors)
        }
        func entry(_ id: String) throws -> ConversationCatalog.Entry {
            let catalog = try ConversationCatalog.discoverExactly([id], endpoint: s.endpoint, authorization: admin)
            guard let entry = catalog.entries.first else { throw LoadError("inbox set-up: \(id) is missing") }
            return entry
        }

        // Both users' newest conversations get a fresh message first, so
        // each first page is recent activity at the top of the server's
        // conversations, not whatever the rows before posted to.
        let refresh = PipelinedSetup(endpoint: s.endpoint, authorization: admin)
        defer { refresh.close() }
        let stamp = MonotonicClock.now()
        try refresh.run((0..<s.inboxSmall).map { .post(InboxBenchSetup.lightConversation($0), "inbox-refresh-\(stamp)-l\($0)") }
                        + (0..<min(s.inboxLarge, 64)).map { .post(InboxBenchSetup.heavyConversation(s.inboxLarge - 1 - $0), "inbox-refresh-\(stamp)-h\($0)") })

        let empty = ConversationCatalog(entries: [try entry(InboxBenchSetup.lightConversation(0))])
        let pageRows: [(name: String, user: String, count: Int)] = [
            ("Inbox page, a user with \(Format.grouped(s.inboxSmall)) conversations", InboxBenchSetup.lightUser, s.inboxSmall),
            ("Inbox page, a user with \(Format.grouped(s.inboxLarge)) conversations", InboxBenchSetup.heavyUser, s.inboxLarge),
        ]
        let crowd = ConversationCatalog(entries: [try entry(InboxBenchSetup.crowdConversation)])
        let pair = ConversationCatalog(entries: [try entry(InboxBenchSetup.pairConversation)])
        let postRows: [(name: String, catalog: ConversationCatalog, members: Int)] = [
            ("Appends to a conversation with 2 members, \(s.posters) posters", pair, 2),
            ("Appends to a conversation with \(Format.grouped(s.crowdMembers)) members, \(s.posters) posters", crowd, s.crowdMembers),
        ]
        var pageRounds: [[Row]] = [[], []]
        var postRounds: [[Row]] = [[], []]
        // The same page size for both: the light user's whole inbox, the heavy user's first rows.
        let limit = min(50, s.inboxSmall)
        for round in 1...s.pageRounds {
            let suffix = s.pageRounds > 1 ? ", round \(round) of \(s.pageRounds)" : ""
            for (index, page) in pageRows.enumerated() {
                let user = page.user
                let roles = Array(repeating: LoadRun.Role(scenario: .inbox, paced: false, make: { _ in InboxPageUser(userID: user, limit: limit) }),
                                  count: s.clients)
                pageRounds[index].append(try measure(page.name + suffix, plan(empty, clients: s.clients, roles: roles), catalog: empty,
                                                     command: "bench --url \(url)",
                                                     kind: .inboxPage))
            }
            for (index, post) in postRows.enumerated() {
                postRounds[index].append(try measure(post.name + suffix, plan(post.catalog, clients: s.posters), catalog: post.catalog,
                                                     command: "bench --url \(url)",
                                                     kind: .post))
            }
        }
        let pages = Self.pairedRows(pageRounds, names: pageRows.map(\.name), versus: "vs \(Format.grouped(s.inboxSmall)) conversations",
                                    rounds: s.pageRounds, firstNote: "limit \(limit), \(s.clients) connections; the newest conversations of both users posted to just before")
        let posts = Self.pairedRows(postRounds, names: postRows.map(\.name), versus: "vs 2 members", rounds: s.pageRounds,
                                    firstNote: "every acked post read back")

        // The feed: pollers park, writers post into their conversations.
        var catalogEntries: [ConversationCatalog.Entry] = []
        for start in stride(from: 0, to: s.inboxFeedConversations, by: 256) {
            let ids = (start..<min(s.inboxFeedConversations, start + 256)).map(InboxBenchSetup.feedConversation)
            catalogEntries += try ConversationCatalog.discoverExactly(ids, endpoint: s.endpoint, authorization: admin).entries
        }
        let feedCatalog = ConversationCatalog(entries: catalogEntries)
        let writers = 8
        let rate = 200.0
        var roles = (0..<s.inboxPollers).map { index in
            LoadRun.Role(scenario: .inbox, paced: false, make: { _ in InboxFeedReader(userID: InboxBenchSetup.poller(index)) })
        }
        roles += Array(repeating: LoadRun.Role(scenario: .post, paced: true, rate: rate / Double(writers)), count: writers)
        var feedPlan = plan(feedCatalog, clients: s.inboxPollers, roles: roles)
        feedPlan.settings.postAckTimes = PostAckTimes()
        feedPlan.warmupReaders = s.inboxPollers
        let warmup = LoadRun.writerWarmup(readers: s.inboxPollers)
        feedPlan.duration = s.duration + .nanoseconds(Int64(warmup))
        let pid = s.serverPID ?? ServerMemory.pid(listeningOn: s.endpoint.port)
        let sampler = pid.map { ResidentMemorySampler(pid: $0) }
        var feed = try measure("Post-to-inbox-feed, \(Format.grouped(s.inboxPollers)) users parked on their inbox feeds", feedPlan,
                               catalog: feedCatalog,
                               command: "bench --url \(url) --inbox-pollers \(s.inboxPollers)",
                               kind: .inboxDelivery)
        let peak = sampler?.stop()
        let deliveries = Double(feed.report.kinds.first { $0.kind == RequestKind.inboxDelivery.name }?.count ?? 0)
        feed.rate = deliveries / max(0.001, feed.report.durationSeconds - Double(warmup) / 1e9)
        let feedPosts = feed.report.kinds.first { $0.kind == RequestKind.post.name }
        let posted = feedPosts?.count ?? 0
        // Timed from the post's answer (its commit as the client sees it):
        // the post's own request and group commit (fsync) are the append
        // rows' business, shown apart.
        let postLatency: String = feedPosts.map { "; the posts themselves (due time to answer, not included) p50 \(Format.fixed($0.p50Ms, 1)) ms, p99 \(Format.fixed($0.p99Ms, 1)) ms" } ?? ""
        let errorsNote = feed.note
        feed.note = "deliveries per second, from the post's answer (its commit) to the feed's answer, 0 when the feed answered first: \(Format.grouped(Int(posted))) posts at \(Int(rate))/s "
            + "after a \(Format.fixed(Double(warmup) / 1e9, 1)) s warm-up, each to the ~\(Format.fixed(Double(s.inboxPollers * setup.pollerConversations(0).count) / Double(max(1, s.inboxFeedConversations)), 1)) parked members of its conversation; "
            + (peak.map { "server peak RSS \(Format.bytes($0))" } ?? "server RSS not readable (--server-pid)")
        feed.note += postLatency + errorsNote
        return InboxRows(pages: pages, posts: posts, feed: feed)
    }

    /// Two rows measured in interleaved rounds: each its median round, the
    /// second's note its median ratio to the first (per round).
    static func pairedRows(_ rounds: [[Row]], names: [String], versus: String, rounds count: Int, firstNote: String) -> [Row] {
        var first = rounds[0][medianIndex(rounds[0].map(\.rate))]
        first.name = names[0]
        first.note = firstNote + first.note
        var second = rounds[1][medianIndex(rounds[1].map(\.rate))]
        second.name = names[1]
        let ratios = zip(rounds[1], rounds[0]).map { $0.rate / max($1.rate, 1) }
        second.note = "\(percent(median(ratios))) \(versus)"
            + (count > 1 ? " (median of \(count) rounds: " + ratios.map(percent).joined(separator: ", ") + ")" : "") + second.note
        return [first, second]
    }
}
