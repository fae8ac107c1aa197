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

    /// RFC 3339's fraction is `1*DIGIT`: any count of digits is floored to
    /// milliseconds, never read into an integer that could overflow.
    @Test func fractionsOfAnyLengthAreFlooredToMilliseconds() {
        for digits in [4, 19, 20, 40, 10_000] {
            let text = "2026-11-21T10:00:00.123" + String(repeating: "9", count: digits - 3) + "Z"
            #expect(Timestamp(rfc3339: text)?.rfc3339 == "2026-11-21T10:00:00.123Z", "\(digits) digits")
            #expect(Timestamp(anyRFC3339: text.replacingOccurrences(of: "Z", with: "+01:00"))?.rfc3339
                    == "2026-11-21T09:00:00.123Z", "\(digits) digits")
        }
        #expect(Timestamp(rfc3339: "2026-11-21T10:00:00.12Z")?.rfc3339 == "2026-11-21T10:00:00.120Z")
    }

    @Test func anyRFC3339TakesOffsetsAndLowerCase() {
        #expect(Timestamp(anyRFC3339: "2026-11-21t10:00:00.5z")?.rfc3339 == "2026-11-21T10:00:00.500Z")
        #expect(Timestamp(anyRFC3339: "2026-11-21T00:30:00-01:45")?.rfc3339 == "2026-11-21T02:15:00.000Z")
        #expect(Timestamp(anyRFC3339: "2026-01-01T00:00:00.001+00:01")?.rfc3339 == "2025-12-31T23:59:00.001Z")
        for bad in ["2026-11-21T10:00:00+24:00", "2026-11-21T10:00:00+01:60", "2026-11-21T10:00:00+0100",
                    "2026-11-21T10:00:00+01:00Z", "2026-11-21T10:00:00Zz", "2026-11-21T10:00:60Z",
                    "2026-11-21T10:00:00.+01:00", "2026-11-21T10:00:00"] {
            #expect(Timestamp(anyRFC3339: bad) == nil, "\(bad)")
        }
        // The stored form only: upper case, UTC.
        #expect(Timestamp(rfc3339: "2026-11-21t10:00:00Z") == nil && Timestamp(rfc3339: "2026-11-21T10:00:00z") == nil)
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
