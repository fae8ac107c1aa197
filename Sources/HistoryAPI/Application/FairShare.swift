import Dispatch
import Foundation

/// How much pool time each key (a connection) used recently: the measured
/// durations of its jobs, halved every `halfLife`, so what a key did a few
/// seconds ago no longer counts against it.
///
/// Decay instead of a virtual clock that only grows: a key seen for the
/// first time starts at zero, which is where any key that has been idle a
/// while is too, so a new connection goes ahead of busy ones once but can
/// never build up a lead that starves them (its first job charges it like
/// anyone else). Keys idle long enough to weigh nothing are forgotten, so
/// the table stays about as large as the connections that used the pool in
/// the last half minute.
struct FairShare {
    private struct Usage {
        /// Nanoseconds of pool time, as of `updated`.
        var charge: Double
        var updated: UInt64
    }

    /// How fast a charge fades: halved every second.
    static let halfLifeNanoseconds: Double = 1_000_000_000
    /// A key untouched this long weighs less than 2^-30 of its charge: forgotten.
    private static let forgetAfterNanoseconds: UInt64 = 30_000_000_000

    private var usage: [String: Usage] = [:]
    /// When the table was last swept of forgotten keys.
    private var swept: UInt64 = 0

    /// A monotonic reading in nanoseconds, the clock charges are kept in.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// `key`'s charge at `now` (zero for a key never charged or forgotten).
    func charge(of key: String, at now: UInt64) -> Double {
        guard let entry = usage[key] else { return 0 }
        return Self.decayed(entry, to: now)
    }

    /// Adds `nanoseconds` to `key`'s charge at `now`.
    mutating func charge(_ key: String, nanoseconds: UInt64, at now: UInt64) {
        let previous = usage[key].map { Self.decayed($0, to: now) } ?? 0
        usage[key] = Usage(charge: previous + Double(nanoseconds), updated: now)
        if now &- swept > Self.forgetAfterNanoseconds {
            swept = now
            usage = usage.filter { now &- $0.value.updated <= Self.forgetAfterNanoseconds }
        }
    }

    /// How many keys are remembered (for tests).
    var rememberedCount: Int { usage.count }

    private static func decayed(_ entry: Usage, to now: UInt64) -> Double {
        guard now > entry.updated else { return entry.charge }
        let elapsed = Double(now - entry.updated)
        return entry.charge * exp2(-elapsed / halfLifeNanoseconds)
    }
}
