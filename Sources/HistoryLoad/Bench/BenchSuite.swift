/// The fixed suite behind docs/performance.md, `history-load bench`: each row one short
/// `run` with fixed settings, so figures from two machines or two commits
/// compare. Every row still checks the answers; a row with a violation is
/// marked in the table.
struct BenchSuite {
    struct Settings: Sendable {
        var endpoint: ServerEndpoint
        var duration: Duration = .seconds(5)
        var clients = 32
        var posters = 64
        var longPolls = 10_000
        var longPollConversations = 1_000
        /// The delivery row's writers post through this instance (the
        /// long-polls park on `endpoint`): cross-instance delivery.
        var writerEndpoint: ServerEndpoint?
        var idleConnections = 10_000
        /// Rounds of the three page rows, run interleaved.
        var pageRounds = 5
        /// Unreported page load before the page rows, per warm-up scenario.
        var warmup: Duration = .seconds(5)
        var progress = true
        /// The inbox rows (a set-up of about 50,000 requests the first time).
        var inbox = true
        /// Only the inbox rows (no `load-` conversations needed).
        var inboxOnly = false
        /// Only the bytes rows (`bytesRows`).
        var bytesOnly = false
        /// Only the jump rows (`jumpRows`): by time against `around`, deep in the largest conversation.
        var jumpOnly = false
        /// `Accept-Encoding: gzip` on the rows' requests (the bytes rows set their own).
        var acceptsGzip = true
        /// `If-None-Match` on the revalidate rows' re-reads.
        var sendsETags = true
        /// The inbox page rows' two users: this many conversations each.
        var inboxSmall = 10
        var inboxLarge = 10_000
        /// Members of the large conversation of the inbox append rows.
        var crowdMembers = 1_000
        /// Users parked on their inbox feeds, members of these conversations.
        var inboxPollers = 10_000
        var inboxFeedConversations = 1_000
        var membershipsPerPoller = 2
        /// The server's process, for its RSS in the inbox feed row (nil: found by its port).
        var serverPID: Int32?
        /// Tokens mode: user tokens of the "tokens HS256" row (nil: no row).
        var hs256: LoadCredentials?
        /// Tokens mode: user tokens of the "tokens ES256" row (nil: no row).
        var es256: LoadCredentials?

        /// With keys the server is in tokens mode, where a request without a
        /// token gets 401: the other rows send admin tokens, the closest to
        /// open mode (a verified token, no membership lookup).
        var baseline: LoadCredentials? {
            guard var credentials = hs256 ?? es256 else { return nil }
            credentials.usersAreAdmins = true
            return credentials
        }
    }

    struct Row: Sendable {
        var name: String
        var command: String
        var report: LoadReport
        /// The figure the row is about: requests, posts or deliveries per second.
        var rate: Double
        var p50: Double
        var p99: Double
        var p999: Double
        var note: String
    }

    let settings: Settings

    func run(log: (String) -> Void) throws -> [Row] {
        let s = settings
        if s.inboxOnly {
            let inbox = try inboxRows(log: log)
            return inbox.pages + inbox.posts + [inbox.feed]
        }
        let url = s.endpoint.description
        let seconds = "\(Int(s.duration.secondsDouble))s"
        var rows: [Row] = []
        let catalog = try ConversationCatalog.discover(endpoint: s.endpoint, prefix: "load-", maximum: 100_000,
                                                       authorization: s.baseline?.adminAuthorization())
        guard let largest = catalog.largest else { throw LoadError("no load-0000 on \(url): seed first") }

        func plan(_ scenario: Scenario, clients: Int) -> LoadPlan {
            var plan = LoadPlan(endpoint: s.endpoint, scenario: scenario, clients: clients, duration: s.duration)
            plan.progress = s.progress
            plan.settings.credentials = s.baseline
            plan.settings.acceptsGzip = s.acceptsGzip
            plan.settings.sendsETags = s.sendsETags
            return plan
        }
        if s.bytesOnly { return try bytesRows(catalog: catalog, log: log) }
        if s.jumpOnly { return try jumpRows(largest: largest, log: log) }
        /// - Parameter allRequests: the rate is every request of the run (deep rows also
        ///   read range pages that re-check a deep page: deep reads too), else `kind`'s.
        func measure(_ name: String, _ plan: LoadPlan, command: String, kind: String, allRequests: Bool = false,
                     note: (LoadReport) -> String) throws -> Row {
            log("bench: \(name)")
            let report = try LoadRun.execute(plan, catalog: catalog)
            let row = report.kinds.first { $0.kind == kind }
            let violations = report.violationCount + report.ackedPostsMissing
            let extra = violations > 0 ? " **\(violations) violations**" : ""
            let errors = Self.errorNote(count: report.errorCount, errors: report.errors)
            let rate = allRequests ? report.requestsPerSecond : row?.perSecond ?? 0
            return Row(name: name, command: command, report: report, rate: rate, p50: row?.p50Ms ?? 0,
                       p99: row?.p99Ms ?? 0, p999: row?.p999Ms ?? 0, note: note(report) + errors + extra)
        }

        // The page rows are compared with each other, so they run
        // interleaved, round by round: on a shared machine the speed drifts
        // by more than the differences measured, and a slice of each kind
        // in every round sees about the same drift. Each row shows its
        // median round; the ratios are medians of the rounds' own ratios
        // against the same round's deep pages. The deep pages with idle
        // connections open are one of them (their row comes last).
        let shorts = catalog.short().count
        var idle = plan(.deep, clients: s.clients)
        idle.idleConnections = s.idleConnections
        var pageRows: [(name: String, plan: LoadPlan, command: String, kind: String, allRequests: Bool, note: String)] = [
            ("Deep `before` pages, \(largest.id) (\(Format.grouped(Int(largest.messageCount))) messages)", plan(.deep, clients: s.clients),
             "run --url \(url) --scenario deep --clients \(s.clients) --duration \(seconds)",
             RequestKind.beforePage.name, true, "\(s.clients) connections; 1 page in 5 is a range page re-checking a deep one"),
            ("Newest page, \(largest.id)", plan(.newest, clients: s.clients),
             "run --url \(url) --scenario newest --clients \(s.clients) --duration \(seconds)",
             RequestKind.newestPage.name, false, ""),
            ("Newest page, random short conversation (\(shorts) of them)", plan(.short, clients: s.clients),
             "run --url \(url) --scenario short --clients \(s.clients) --duration \(seconds)",
             RequestKind.newestPage.name, false, ""),
            ("Deep pages with \(Format.grouped(s.idleConnections)) idle keep-alive connections open", idle,
             "run --url \(url) --scenario deep --clients \(s.clients) --connections \(s.idleConnections) --duration \(seconds)",
             RequestKind.beforePage.name, true, ""),
        ]
        // User tokens: each virtual user its own subject, a member of the
        // conversations it reads; one token per user, reused. Beside the
        // deep row (admin tokens when keys are given), before the idle row.
        for (algorithm, credentials, option) in [("HS256", s.hs256, "--jwt-secret-file FILE"),
                                                 ("ES256", s.es256, "--jwt-es256-private-key KID=PEM")] {
            guard let credentials else { continue }
            var tokens = plan(.deep, clients: s.clients)
            tokens.settings.credentials = credentials
            pageRows.insert(("Deep pages, tokens \(algorithm)", tokens,
                             "run --url \(url) --scenario deep --clients \(s.clients) --duration \(seconds) \(option) --members \(credentials.members)",
                             RequestKind.beforePage.name, true,
                             "\(min(s.clients, credentials.members)) users' tokens, each a member"), at: pageRows.count - 1)
        }
        // A fresh server maps the file's pages in as it first reads them:
        // one unreported slice of deep and short pages first, so the rounds
        // measure the steady state of a server that has been up a while.
        if s.warmup > .zero {
            for scenario in [Scenario.deep, .short] {
                var warmup = plan(scenario, clients: s.clients)
                warmup.duration = s.warmup
                let warm = try measure("warm-up: \(scenario.rawValue) pages for \(Format.fixed(s.warmup.secondsDouble, 0)) s", warmup,
                                       command: "run --url \(url) --scenario \(scenario.rawValue) --clients \(s.clients)",
                                       kind: RequestKind.beforePage.name) { _ in "" }
                // Its figures are not reported, but a wrong answer is.
                if !warm.report.passed { rows.append(warm) }
            }
        }
        var rounds: [[Row]] = Array(repeating: [], count: pageRows.count)
        for round in 1...s.pageRounds {
            for (index, page) in pageRows.enumerated() {
                let label = s.pageRounds > 1 ? "\(page.name), round \(round) of \(s.pageRounds)" : page.name
                rounds[index].append(try measure(label, page.plan, command: page.command, kind: page.kind,
                                                 allRequests: page.allRequests) { _ in page.note })
            }
        }
        var pageResults: [Row] = []
        for (index, page) in pageRows.enumerated() {
            var row = rounds[index][Self.medianIndex(rounds[index].map(\.rate))]
            row.name = page.name
            let ratios = zip(rounds[index], rounds[0]).map { $0.rate / max($1.rate, 1) }
            let perRound = "(median of \(s.pageRounds) rounds: " + ratios.map(Self.percent).joined(separator: ", ") + ")"
            switch index {
            case 0 where s.pageRounds > 1:
                row.note += "; median of \(s.pageRounds) rounds: " + rounds[0].map { Format.grouped(Int($0.rate.rounded())) }.joined(separator: ", ")
            case 0:
                break
            case pageRows.count - 1:
                row.note = "\(row.report.idleConnectionsOpen) idle open; \(Self.percent(Self.median(ratios))) throughput vs no idle " + perRound
            default:
                row.note = "\(Self.percent(Self.median(ratios))) vs deep " + perRound
            }
            pageResults.append(row)
        }
        rows.append(contentsOf: pageResults.dropLast())
        rows += try jumpRows(largest: largest, log: log)
        var posts = plan(.post, clients: s.posters)
        posts.settings.liveConversations = max(1, min(64, catalog.entries.count))
        rows.append(try measure("Appends, \(s.posters) posters", posts,
                                command: "run --url \(url) --scenario post --clients \(s.posters) --live-conversations \(posts.settings.liveConversations) --duration \(seconds)",
                                kind: RequestKind.post.name) { report in
            "\(Format.grouped(report.ackedPostsReadable)) of \(Format.grouped(report.ackedPosts)) acked read back"
        })
        var tail = plan(.tail, clients: s.longPolls)
        tail.settings.liveConversations = max(1, min(s.longPollConversations, catalog.entries.count))
        tail.writers = 8
        tail.rate = 200
        tail.writerEndpoint = s.writerEndpoint
        let across = s.writerEndpoint.map { " --writer-url \($0)" } ?? ""
        // The writers wait for the readers' first burst of pages: post for the row's full duration after it.
        let warmup = LoadRun.writerWarmup(readers: s.longPolls)
        tail.duration = s.duration + .nanoseconds(Int64(warmup))
        let tailSeconds = "\(Int(tail.duration.secondsDouble.rounded(.up)))s"
        var delivery = try measure("Post-to-delivery\(across.isEmpty ? "" : " across instances"), \(Format.grouped(s.longPolls)) long-polls parked on \(tail.settings.liveConversations) conversations",
                                   tail,
                                   command: "run --url \(url) --scenario tail --clients \(s.longPolls) --live-conversations \(tail.settings.liveConversations) --writers 8 --rate 200 --duration \(tailSeconds)\(across)",
                                   kind: RequestKind.delivery.name) { report in
            "deliveries per second: \(Format.grouped(Int(report.kinds.first { $0.kind == RequestKind.post.name }?.count ?? 0))) posts at 200/s "
                + "after a \(Format.fixed(Double(warmup) / 1e9, 1)) s warm-up, each to the ~\(max(1, s.longPolls / tail.settings.liveConversations)) "
                + "waiters of its conversation"
        }
        let deliveries = Double(delivery.report.kinds.first { $0.kind == RequestKind.delivery.name }?.count ?? 0)
        delivery.rate = deliveries / max(0.001, delivery.report.durationSeconds - Double(warmup) / 1e9)
        rows.append(delivery)
        rows.append(pageResults.last!)
        rows += try bytesRows(catalog: catalog, log: log)
        if s.inbox {
            let inbox = try inboxRows(log: log)
            rows += inbox.pages + inbox.posts + [inbox.feed]
        }
        return rows
    }

    /// The index of the median rate (the lower middle one of an even count).
    /// A row's errors for its notes: how many, and which (the three most
    /// frequent), since a lone error in a row is otherwise untraceable;
    /// empty without errors. `|` would split the Markdown cell.
    static func errorNote(count: Int, errors: [String: Int]) -> String {
        guard count > 0 else { return "" }
        let named = errors.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(3)
            .map { "\($0.key.replacing("|", with: "/")): \($0.value)" }
        return " (\(count) errors: \(named.joined(separator: "; ")))"
    }

    static func medianIndex(_ rates: [Double]) -> Int {
        rates.indices.sorted { rates[$0] < rates[$1] }[(rates.count - 1) / 2]
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// A ratio as a signed percentage difference: 1.05 is "+5%".
    static func percent(_ ratio: Double) -> String {
        let value = (ratio - 1) * 100
        return (value >= 0 ? "+" : "") + Format.fixed(value, 0) + "%"
    }

    static func markdown(_ rows: [Row]) -> String {
        var lines = [
            "| benchmark | per second | p50 ms | p99 ms | p99.9 ms | notes |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for row in rows {
            lines.append("| \(row.name) | \(Format.grouped(Int(row.rate.rounded()))) | \(Format.fixed(row.p50, 2)) | "
                         + "\(Format.fixed(row.p99, 2)) | \(Format.fixed(row.p999, 2)) | \(row.note) |")
        }
        lines.append("")
        lines.append("Commands (each row is one `history-load` run):")
        lines.append("")
        for row in rows { lines.append("- \(row.name): `history-load \(row.command)`") }
        return lines.joined(separator: "\n")
    }
}
