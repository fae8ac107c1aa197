/// A small, fast, seedable random number generator (Steele, Lea and Flood's
/// SplitMix64): `--seed` makes the tools' seeding, virtual users and
/// benchmark cursors repeatable, and a failing random test replays from its
/// seed; `SystemRandomNumberGenerator` cannot be seeded and costs a
/// syscall-backed read per call.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A generator for one of many parallel streams of the same run.
    public init(seed: UInt64, stream: UInt64) {
        var mixer = SplitMix64(seed: seed ^ (stream &* 0x9E37_79B9_7F4A_7C15))
        state = mixer.next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
