import HistoryClient
import HistoryTestSupport

/// A rule of CLIENTS.md broken at one step of a simulation.
struct Violation: CustomStringConvertible {
    enum Kind: String, CaseIterable {
        /// The row being read moved, and the user did not ask to move.
        case readRowMoved
        /// New messages moved a reader who was scrolled up.
        case pulledByNewMessages
        /// Rows were prepended and the row being read moved in that frame,
        /// put back only in a later one.
        case anchorRestoredLate
        /// A detached window's rows were all replaced while the user did not ask.
        case visibleRowsReplaced
        /// A chat shorter than the screen does not start at its top.
        case shortChatNotTop
        case overCapacity
        /// Message rows not ascending, or one shown twice (also as pending).
        case shownTwiceOrOutOfOrder
        /// A send neither stored once nor shown failed once the network is back.
        case sendLost
        /// A request failed and nothing on screen says so.
        case errorSwallowed
        /// The live feed started from a version no page was read at (replaying history).
        case feedReplayed
    }

    var kind: Kind
    var context: String
    var description: String { "\(kind.rawValue): \(context)" }
}

/// A phone screen over a ``ScreenUnderTest``: rows with heights, a scroll
/// offset and a screen height. It lays the rows out as a top-aligned list
/// (or bottom-aligned when the screen asks for it), performs each frame's
/// scroll action as a scroll view would (clamped to the content), reports
/// the viewport back after every step, and checks the rules after every frame.
struct ViewportSimulator<Screen: ScreenUnderTest> {
    var screen: Screen
    var server: SimulatedServer
    let screenHeight: Double
    let followDistance: Double = 80
    private(set) var offset: Double = 0
    private(set) var violations: [Violation] = []
    private(set) var steps = 0
    /// Sends made, by client id.
    private(set) var sent: [String] = []
    private var lastReport: ChatViewport?

    // The layout of the current rows.
    private var rowIDs: [ChatRowID] = []
    private var tops: [ChatRowID: Double] = [:]
    private var contentHeight: Double = 0

    init(screen: Screen, server: SimulatedServer, screenHeight: Double) {
        self.screen = screen
        self.server = server
        self.screenHeight = screenHeight
    }

    /// A message's height depends on its id (and shrinks when deleted), so
    /// an edit or a delete above the reader changes the content above them.
    static func height(of id: ChatRowID, deleted: Set<Int64>) -> Double {
        switch id {
        case .message(let messageID): deleted.contains(messageID) ? 24 : 30 + Double((messageID &* 2_654_435_761) % 90)
        case .loadingOlder, .loadingNewer: 40
        case .unreadDivider: 22
        case .pending: 50
        case .typing: 30
        }
    }

    // MARK: - Layout

    private mutating func layout() {
        rowIDs = screen.rowIDs
        let deleted = Set(screen.windowMessages.lazy.filter(\.deleted).map(\.id))
        tops.removeAll(keepingCapacity: true)
        var y = 0.0
        for id in rowIDs {
            tops[id] = y
            y += Self.height(of: id, deleted: deleted)
        }
        contentHeight = y
    }

    private var maximumOffset: Double { Swift.max(0, contentHeight - screenHeight) }

    /// Where a row's top is on screen now.
    private func screenTop(of id: ChatRowID) -> Double? {
        guard let top = tops[id] else { return nil }
        let shift = screen.bottomAlignsShortContent && contentHeight < screenHeight ? screenHeight - contentHeight : 0
        return top - offset + shift
    }

    private func viewport() -> ChatViewport {
        let deleted = Set(screen.windowMessages.lazy.filter(\.deleted).map(\.id))
        var visible: [ChatViewport.VisibleRow] = []
        for id in rowIDs {
            guard let top = screenTop(of: id) else { continue }
            if top >= screenHeight { break }
            if top + Self.height(of: id, deleted: deleted) > 0 { visible.append(.init(id: id, top: top)) }
        }
        let below = contentHeight < screenHeight ? 0 : contentHeight - offset - screenHeight
        return ChatViewport(visibleRows: visible, distanceFromBottom: below, height: screenHeight)
    }

    /// Performs one frame's action; true when the offset had to be clamped.
    private mutating func perform(_ action: ChatScrollCommand.Action) -> Bool {
        var desired = offset
        switch action {
        case .none: break
        case .keep(let id, let top): if let y = tops[id] { desired = y - top }
        case .scrollToBottom: desired = contentHeight - screenHeight
        }
        offset = Swift.min(Swift.max(desired, 0), maximumOffset)
        return abs(offset - desired) > 0.5 && action != .scrollToBottom
    }

    // MARK: - Steps

    /// The user scrolls by `delta` points (positive: towards older
    /// messages, as a finger dragging down), then the view reports.
    mutating func scroll(by delta: Double) {
        offset = Swift.min(Swift.max(offset - delta, 0), maximumOffset)
        report()
    }

    /// One input, its frames checked, then the viewport reported (and
    /// what the report loads checked too).
    mutating func step(_ input: ScreenInput, context: String) {
        handle(input, context: context)
        report(context: context)
    }

    /// Reports the viewport until a report changes nothing (a loader that
    /// stays in view loads again, at most a few times a step), so the
    /// screen always knows the layout the user sees.
    private mutating func report(context: String = "") {
        for _ in 0..<6 {
            let viewport = viewport()
            lastReport = viewport
            let rowsBefore = rowIDs
            guard handle(.viewport(viewport), context: context) || rowIDs != rowsBefore else { return }
        }
    }

    /// Returns whether anything was drawn.
    @discardableResult
    private mutating func handle(_ input: ScreenInput, context: String) -> Bool {
        steps += 1
        let before = lastReport ?? viewport()
        let wasDetached = rowIDs.contains(.loadingNewer)
        let nearBottom = before.distanceFromBottom <= followDistance
        let rowsBefore = rowIDs
        var frames = screen.handle(input, server: &server)
        layout()
        if frames.isEmpty, rowIDs == rowsBefore { return false }
        if frames.isEmpty { frames = [.none] }
        let present = Set(rowIDs)
        let anchor = before.visibleRows.first { present.contains($0.id) }
        var movedInFrame: Int?
        for (index, action) in frames.enumerated() {
            let clamped = perform(action)
            guard !input.isUserMove, let anchor, !clamped, let top = screenTop(of: anchor.id) else { continue }
            if abs(top - anchor.top) > 0.5 {
                if movedInFrame == nil { movedInFrame = index }
            }
            if movedInFrame == 0, index > 0, index == frames.count - 1, case .keep = action {
                // Moved when the rows changed, scrolled back one frame later.
                record(.anchorRestoredLate, "\(anchor.id) \(context)")
                movedInFrame = nil
            }
        }
        if let movedInFrame, let anchor {
            let detail = "\(anchor.id) from \(anchor.top) to \(screenTop(of: anchor.id) ?? .nan) by \(frames) "
                + "(\(before.distanceFromBottom) from the bottom), \(input), \(context)"
            if case .deliverFeed = input, !nearBottom {
                record(.pulledByNewMessages, detail)
            } else if !nearBottom || movedInFrame > 0 || !(frames.last == .scrollToBottom) {
                record(.readRowMoved, detail)
            }
        }
        let visibleMessages = before.visibleRows.filter { if case .message = $0.id { true } else { false } }
        // Reaching the bottom loader of a detached window may replace it
        // with the newest page (the server's `reset`); nothing else may.
        let reachedLoader = before.visibleRows.contains { $0.id == .loadingNewer }
        if !input.isUserMove, wasDetached, !reachedLoader, !visibleMessages.isEmpty, !visibleMessages.contains(where: { present.contains($0.id) }) {
            record(.visibleRowsReplaced, context)
        }
        checkStructure(context: context)
        return true
    }

    private mutating func record(_ kind: Violation.Kind, _ context: String) {
        if violations.count < 200 { violations.append(Violation(kind: kind, context: context)) }
    }

    private mutating func checkStructure(context: String) {
        if contentHeight < screenHeight, let first = rowIDs.first, let top = screenTop(of: first), abs(top) > 0.5 {
            record(.shortChatNotTop, "first row at \(top), \(context)")
        }
        if screen.windowMessages.count > screen.capacity {
            record(.overCapacity, context)
        }
        var previous = Int64.min
        var storedClientIDs: Set<String> = []
        for case .message(let id) in rowIDs {
            if id <= previous { record(.shownTwiceOrOutOfOrder, "\(id) after \(previous), \(context)") }
            previous = id
        }
        for message in screen.windowMessages { if let clientID = message.clientID { storedClientIDs.insert(clientID) } }
        for case .pending(let clientID) in rowIDs where storedClientIDs.contains(clientID) {
            record(.shownTwiceOrOutOfOrder, "pending \(clientID) also stored, \(context)")
        }
        if let start = screen.feedStart, !screen.pageVersions.contains(start) {
            record(.feedReplayed, "feed from \(start), \(context)")
        }
    }

    // MARK: - Properties outside single frames

    /// A request just failed: something must say so.
    mutating func expectErrorShown(context: String) {
        if !screen.showsError { record(.errorSwallowed, context) }
    }

    mutating func send(_ clientID: String, context: String) {
        sent.append(clientID)
        step(.send(clientID: clientID), context: context)
    }

    /// With the server up and every retry done: each send stored once and
    /// no longer pending, or shown failed; then a retry of the failed ones
    /// stores them too.
    mutating func settleSends(context: String) {
        server.down = false
        server.losesNextAnswer = false
        for _ in 0..<ModelScreen.maximumSendAttempts { step(.retrySends, context: context) }
        for clientID in sent {
            let pending = screen.outbox.first { $0.clientID == clientID }
            let stored = server.conversation.storedClientIDs[clientID] != nil
            switch pending?.state {
            case nil: if !stored { record(.sendLost, "\(clientID) neither stored nor pending, \(context)") }
            case .sending?: record(.sendLost, "\(clientID) still sending with the server up, \(context)")
            case .failed?: break
            }
        }
        step(.retryFailed, context: context)
        for clientID in sent where server.conversation.storedClientIDs[clientID] == nil
            || screen.outbox.contains(where: { $0.clientID == clientID }) {
            record(.sendLost, "\(clientID) not stored after a retry, \(context)")
        }
    }
}
