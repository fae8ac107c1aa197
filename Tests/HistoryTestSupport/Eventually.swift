import Foundation

/// Polls `condition` every 10 ms until it holds or `within` has passed;
/// returns whether it held. For effects that land on another thread (a
/// connection count falling to zero, a long-poll parking): the time limit is
/// a bound on failure, never a measurement, so it is long (see below).
public func eventually(within limit: Duration = .seconds(60), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

/// The same without blocking a thread of Swift's cooperative pool, for
/// async tests. `condition` runs on the caller's actor, so a main-actor test
/// can read its screen model. The limit is long on purpose: `swift test` runs
/// hundreds of tests at once on two cores, and the tasks a test waits for can
/// be starved for a minute there (a scripted 1-second `Retry-After` once took
/// longer than 60 s in CI); the limit only bounds a failure.
public func eventually(within limit: Duration = .seconds(180), isolation: isolated (any Actor)? = #isolation,
                       _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
