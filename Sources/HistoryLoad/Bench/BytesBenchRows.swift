/// The bench's rows about bytes (docs/performance.md, "Bytes per page"):
/// the newest page of 50 of the largest conversation read identity, then
/// gzip, then revalidated (`If-None-Match`, answered 304), interleaved
/// round by round like the page rows; each row gives pages/s, bytes per
/// page as sent and the server's CPU per page (from /proc, so only for a
/// server on this machine). Then the `revalidate` scenario: users reopening
/// conversations they hold while writers post, its 304 share, pages/s and p99.
extension BenchSuite {
    func bytesRows(catalog: ConversationCatalog, log: (String) -> Void) throws -> [Row] {
        let s = settings
        let url = s.endpoint.description
        let seconds = "\(Int(s.duration.secondsDouble))s"
        let pid = s.serverPID ?? ServerMemory.pid(listeningOn: s.endpoint.port)
        guard let largest = catalog.largest else { return [] }
        // The revalidated reads go to the largest conversation only, like the other two.
        let largestOnly = ConversationCatalog(entries: [largest])

        func plan(_ scenario: Scenario, gzip: Bool, etag: Bool = true, clients: Int) -> LoadPlan {
            var plan = LoadPlan(endpoint: s.endpoint, scenario: scenario, clients: clients, duration: s.duration)
            plan.progress = s.progress
            plan.settings.credentials = s.baseline
            plan.settings.acceptsGzip = gzip
            plan.settings.sendsETags = etag && s.sendsETags
            return plan
        }
        /// One run; the row's rate is `kind`'s pages per second.
        func measure(_ name: String, _ plan: LoadPlan, catalog: ConversationCatalog, command: String,
                     kind: RequestKind) throws -> (row: Row, cpuPerPage: Double?, bytesPerPage: Double) {
            log("bench: \(name)")
            let before = pid.flatMap(ServerCPU.seconds)
            let report = try LoadRun.execute(plan, catalog: catalog)
            let after = pid.flatMap(ServerCPU.seconds)
            let row = report.kinds.first { $0.kind == kind.name }
            let count = Double(row?.count ?? 0)
            let cpu = before.flatMap { start in after.map { ($0 - start) / max(count, 1) } }
            let bytes = Double(row?.bytes ?? 0) / max(count, 1)
            let violations = report.violationCount + report.ackedPostsMissing
            let extra = violations > 0 ? " **\(violations) violations**" : ""
            let errors = report.errorCount > 0 ? " (\(report.errorCount) errors)" : ""
            return (Row(name: name, command: command, report: report, rate: row?.perSecond ?? 0, p50: row?.p50Ms ?? 0,
                        p99: row?.p99Ms ?? 0, p999: row?.p999Ms ?? 0, note: extra + errors), cpu, bytes)
        }

        let variants: [(name: String, plan: LoadPlan, command: String, kind: RequestKind)] = [
            ("Newest page, \(largest.id), identity", plan(.newest, gzip: false, clients: s.clients),
             "run --url \(url) --scenario newest --clients \(s.clients) --duration \(seconds) --no-gzip", .newestPage),
            ("Newest page, \(largest.id), gzip", plan(.newest, gzip: true, clients: s.clients),
             "run --url \(url) --scenario newest --clients \(s.clients) --duration \(seconds)", .newestPage),
            ("Newest page, \(largest.id), revalidated (304)", plan(.revalidate, gzip: true, clients: s.clients),
             "run --url \(url) --scenario revalidate --clients \(s.clients) --duration \(seconds) --prefix \(largest.id)",
             .revalidatedPage),
        ]
        var rounds: [[Measured]] = Array(repeating: [], count: variants.count)
        for round in 1...max(1, s.pageRounds) {
            for (index, variant) in variants.enumerated() {
                let label = s.pageRounds > 1 ? "\(variant.name), round \(round) of \(s.pageRounds)" : variant.name
                rounds[index].append(try measure(label, variant.plan, catalog: largestOnly, command: variant.command,
                                                 kind: variant.kind))
            }
        }
        var rows: [Row] = []
        for (index, variant) in variants.enumerated() {
            let results = rounds[index]
            var chosen = results[Self.medianIndex(results.map(\.row.rate))]
            chosen.row.name = variant.name
            let cpus = results.compactMap(\.cpuPerPage)
            let cpu = cpus.isEmpty ? "server CPU n/a (not on this machine)"
                : "server CPU \(Format.fixed(Self.median(cpus) * 1e6, 1)) µs per page (median of \(cpus.count) rounds)"
            let checks = chosen.row.report.checks
            let share = checks[CheckCounters.notModifiedKey].map { notModified in
                "; " + Format.fixed(Double(notModified) * 100 / Double(max(1, checks[CheckCounters.revalidationsKey] ?? 0)), 1) + "% were 304"
            } ?? ""
            chosen.row.note = "\(Format.grouped(Int(chosen.bytesPerPage.rounded()))) bytes per page as sent; \(cpu)\(share)"
                // The variants are identity, gzip, then the 304.
                + (variant.kind == .revalidatedPage ? Self.shareOfAPage(notModified: rounds[2], identity: rounds[0], gzip: rounds[1]) : "")
                + chosen.row.note
            rows.append(chosen.row)
        }

        // Clients reopening the conversations they hold while others post.
        var reopen = plan(.revalidate, gzip: true, clients: s.clients)
        reopen.writers = 2
        reopen.rate = 20
        let reopened = try measure("Reopening held conversations (`revalidate`), 20 posts/s meanwhile", reopen,
                                   catalog: catalog,
                                   command: "run --url \(url) --scenario revalidate --clients \(s.clients) --writers 2 --rate 20 --duration \(seconds)",
                                   kind: .revalidatedPage)
        var row = reopened.row
        let revalidated = row.report.checks[CheckCounters.revalidationsKey] ?? 0
        let notModified = row.report.checks[CheckCounters.notModifiedKey] ?? 0
        let share = revalidated > 0 ? Format.fixed(Double(notModified) * 100 / Double(revalidated), 1) + "%" : "n/a"
        row.note = "304 share \(share) of \(Format.grouped(revalidated)) reopenings, each user holding \(RevalidateUser.held) "
            + "conversations; \(Format.grouped(Int(reopened.bytesPerPage.rounded()))) bytes per reopening" + row.note
        rows.append(row)
        return rows
    }

    /// The 304's CPU as a share of the identity page's and of the gzip
    /// page's (the one a client that sends both headers would otherwise
    /// get), each the median of the rounds' own ratios: issue 27 asks for
    /// at most a quarter. Empty without CPU figures.
    private typealias Measured = (row: Row, cpuPerPage: Double?, bytesPerPage: Double)

    private static func shareOfAPage(notModified: [Measured], identity: [Measured], gzip: [Measured]) -> String {
        func share(of pages: [Measured]) -> Double? {
            let ratios = zip(notModified, pages).compactMap { notModified, page -> Double? in
                guard let cost = notModified.cpuPerPage, let pageCost = page.cpuPerPage, pageCost > 0 else { return nil }
                return cost / pageCost
            }
            return ratios.isEmpty ? nil : median(ratios)
        }
        guard let identity = share(of: identity), let gzip = share(of: gzip) else { return "" }
        return "; \(Format.fixed(identity * 100, 0))% of an identity page's CPU, \(Format.fixed(gzip * 100, 0))% of a gzip page's"
    }
}
