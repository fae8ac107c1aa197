import Testing
@testable import HistoryLoad

@Suite("KnownSpan: pages over the same ids must agree")
struct KnownSpanTests {
    @Test func aWalkDownMergesWithoutDisagreement() {
        var span = KnownSpan()
        #expect(span.merge([101, 103, 104][...], covering: 101...104, version: 1, reachesFirst: false).isEmpty)
        #expect(span.merge([90, 95, 100][...], covering: 90...100, version: 1, reachesFirst: true).isEmpty)
        #expect(span.ids == [90, 95, 100, 101, 103, 104])
        #expect(span.reachesFirst && span.lower == 90 && span.upper == 104)
    }

    @Test func aLaterPageLackingAKnownIDIsAGap() {
        var span = KnownSpan()
        _ = span.merge([10, 11, 12, 13][...], covering: 10...13, version: 1, reachesFirst: false)
        let found = span.merge([12, 14][...], covering: 12...14, version: 2, reachesFirst: false)
        #expect(found == [.missing(13)])
    }

    @Test func anUnknownIDInsideAKnownRangeIsALateLowerID() {
        var span = KnownSpan()
        _ = span.merge([10, 12, 20][...], covering: 10...20, version: 1, reachesFirst: false)
        let found = span.merge([12, 15, 20, 21][...], covering: 12...21, version: 2, reachesFirst: false)
        #expect(found == [.unexpected(15)])
        #expect(span.upper == 21)
    }

    @Test func newIdsAboveTheKnownRangeAreFine() {
        var span = KnownSpan()
        _ = span.merge([1, 2, 3][...], covering: 1...3, version: 1, reachesFirst: true)
        #expect(span.merge([2, 3, 7, 9][...], covering: 2...9, version: 3, reachesFirst: false).isEmpty)
        #expect(span.ids == [1, 2, 3, 7, 9] && span.versions == 1...3)
    }

    @Test func aDistantPageRestartsTheSpan() {
        var span = KnownSpan()
        _ = span.merge([1, 2][...], covering: 1...2, version: 1, reachesFirst: true)
        #expect(span.merge([50, 51][...], covering: 50...51, version: 1, reachesFirst: false).isEmpty)
        #expect(span.ids == [50, 51] && !span.reachesFirst)
    }

    @Test func theSpanStaysBounded() {
        var span = KnownSpan()
        var next: Int64 = 1
        for _ in 0..<200 {
            let ids = Array(next..<(next + 50))
            #expect(span.merge(ids[...], covering: next...(next + 49), version: 1, reachesFirst: next == 1).isEmpty)
            next += 50
        }
        #expect(span.ids.count <= KnownSpan.maximumIDs)
        #expect(span.upper == next - 1)
    }

    @Test func singlePageChecks() {
        let log = InvariantLog()
        var counters = CheckCounters()
        var page = PageSummary()
        page.ids = [5, 4]
        page.oldestID = 5
        page.newestID = 4
        _ = PageChecks.check(page, cursor: .newest, limit: 50, context: "t", log: log, counters: &counters)
        page.ids = [3, 9]
        page.oldestID = 3
        page.newestID = 9
        page.hasOlder = true
        _ = PageChecks.check(page, cursor: .before(9), limit: 50, context: "t", log: log, counters: &counters)
        page.anchor = .init(id: 9, found: true, index: 0)
        _ = PageChecks.check(page, cursor: .around(9), limit: 2, context: "t", log: log, counters: &counters)
        let entries = log.entries
        #expect(entries["page_ascending"]?.count == 1)
        #expect(entries["page_within_cursor"]?.count == 1)
        #expect(entries["page_fields"]?.count == 1)   // a short before page with has_older
        #expect(entries["anchor_index"]?.count == 1)
        #expect(counters.pages == 3)
    }
}
