import Foundation
import HistoryStore
import Testing

@Suite("Timestamp: RFC 3339 with milliseconds")
struct TimestampTests {
    /// Foundation's formatter is the reference: slow, but independent of ours.
    private static func reference(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let seconds = Double(milliseconds.dividedRoundingDown(by: 1000))
        let date = Date(timeIntervalSince1970: seconds)
        let text = formatter.string(from: date)   // "...:SS.000Z"
        let fraction = String(format: "%03lld", milliseconds - milliseconds.dividedRoundingDown(by: 1000) * 1000)
        return String(text.dropLast(4)) + fraction + "Z"
    }

    @Test func formatsLikeFoundationAcrossCenturies() {
        var generator = SystemRandomNumberGenerator()
        // 1900-01-01 to 2200-01-01, plus the edges that trip calendar code.
        let edges: [Int64] = [0, -1, 1, 951_782_400_000, 951_868_799_999, 4_107_542_399_999, -2_208_988_800_000]
        let random = (0..<5_000).map { _ in Int64.random(in: -2_208_988_800_000...7_258_118_400_000, using: &generator) }
        for milliseconds in edges + random {
            let ours = Timestamp(millisecondsSinceEpoch: milliseconds).rfc3339
            #expect(ours == Self.reference(milliseconds), "\(milliseconds)")
            #expect(Timestamp(rfc3339: ours)?.millisecondsSinceEpoch == milliseconds, "\(ours)")
        }
    }

    @Test func theContractsExampleRoundTrips() {
        let parsed = Timestamp(rfc3339: "2026-11-21T10:00:00.123Z")
        #expect(parsed?.rfc3339 == "2026-11-21T10:00:00.123Z")
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00Z")?.rfc3339 == "2026-11-21T10:00:00.000Z")
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.5Z")?.rfc3339 == "2026-11-21T10:00:00.500Z")
    }

    @Test(arguments: ["", "2026-11-21", "2026-13-01T00:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T10:00:00+01:00",
                      "2026-11-21T10:00:00.Z", "2026-11-21 10:00:00Z"])
    func refusesWhatIsNotUTCRFC3339(_ text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }
}

extension Int64 {
    fileprivate func dividedRoundingDown(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
