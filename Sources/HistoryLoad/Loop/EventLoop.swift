import Glibc
import HTTPCore

/// One loop thread's epoll set: many non-blocking keep-alive connections
/// (``LoopConnection``), plus a timerfd for the open-loop schedule, so a
/// few threads carry thousands of users and parked long-polls without a
/// context switch per request.
///
/// Not Sendable: created, run and torn down on its own thread.
final class EventLoop {
    let control: RunControl
    /// Shared by the loop's connections: each reads into it and hands the bytes to its parser at once.
    let readBuffer: UnsafeMutableRawBufferPointer
    private let epoll: Int32
    private let timerFD: Int32
    private let eventBuffer: UnsafeMutableRawBufferPointer
    private var slots: [LoopConnection?] = []
    private var freeSlots: [Int] = []
    /// Freed while a batch of events is handled: reused only after it, so a
    /// stale event for a closed connection never reaches the next one.
    private var releasedSlots: [Int] = []
    private var timers = TimerHeap()
    private var armedDue: UInt64 = 0
    private static let timerSlot = UInt64(UInt32.max)

    init(control: RunControl) throws {
        self.control = control
        let epoll: Int32
        do {
            epoll = try Epoll.create()
        } catch {
            throw LoadError("epoll_create1: \(RawSocket.describe(error.errno))")
        }
        guard let timerFD = MonotonicTimerFD.create() else {
            let code = errno
            Glibc.close(epoll)
            throw LoadError("timerfd_create: \(RawSocket.describe(code))")
        }
        self.epoll = epoll
        self.timerFD = timerFD
        readBuffer = .allocate(byteCount: 256 * 1024, alignment: 16)
        eventBuffer = .allocate(byteCount: 1024 * Epoll.eventStride, alignment: 16)
        try? Epoll.control(epoll, .add, fd: timerFD, events: Epoll.readable, token: Self.timerSlot)
    }

    deinit {
        Glibc.close(timerFD)
        Glibc.close(epoll)
        readBuffer.deallocate()
        eventBuffer.deallocate()
    }

    /// Calls `action` on this loop once `due` (monotonic nanoseconds) has come.
    func schedule(at due: UInt64, _ action: @escaping () -> Void) {
        timers.schedule(at: due, action)
    }

    func register(_ connection: LoopConnection, fd: Int32, events: UInt32) -> Int {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = connection
        } else {
            slot = slots.count
            slots.append(connection)
        }
        try? Epoll.control(epoll, .add, fd: fd, events: events, token: UInt64(slot))
        return slot
    }

    func modify(slot: Int, fd: Int32, events: UInt32) {
        try? Epoll.control(epoll, .modify, fd: fd, events: events, token: UInt64(slot))
    }

    /// Forgets the connection; the caller closes the descriptor (which also leaves the epoll set).
    func unregister(slot: Int, fd: Int32) {
        try? Epoll.control(epoll, .delete, fd: fd, events: 0, token: 0)
        slots[slot] = nil
        releasedSlots.append(slot)
    }

    /// Runs timers and socket events until the run ends, then closes every
    /// connection (answers still outstanding, e.g. parked long-polls, are dropped uncounted).
    func run() {
        // Wake for the deadline even when nothing else is due.
        schedule(at: control.deadlineNanos) {}
        while control.shouldContinue {
            let now = MonotonicClock.now()
            while let action = timers.popDue(now: now) { action() }
            if let next = timers.nextDue, next != armedDue { arm(next) }
            // Timers are exact through the timerfd; the timeout only notices a `stop()`.
            let count = Epoll.wait(epoll, into: eventBuffer, timeoutMilliseconds: 100)
            if count > 0 {
                for index in 0..<count {
                    let event = Epoll.event(at: index, in: eventBuffer)
                    let slot = event.token
                    if slot == Self.timerSlot {
                        var expirations: UInt64 = 0
                        _ = read(timerFD, &expirations, 8)
                        armedDue = 0
                    } else if let connection = slots[Int(slot)] {
                        connection.handle(events: event.events)
                    }
                }
            }
            if !releasedSlots.isEmpty {
                freeSlots.append(contentsOf: releasedSlots)
                releasedSlots.removeAll(keepingCapacity: true)
            }
        }
        for connection in slots { connection?.close() }
        timers.removeAll()
    }

    private func arm(_ due: UInt64) {
        armedDue = due
        MonotonicTimerFD.arm(timerFD, at: due)
    }
}
