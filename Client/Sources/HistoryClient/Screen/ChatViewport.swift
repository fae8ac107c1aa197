/// What the view reports after each layout or scroll: facts it measures,
/// never decisions. The model derives "near the bottom", the row being
/// read, what was seen and which loader appeared from these alone, so no
/// flag can be left stale (the old sample's `isAtBottom` that was never set
/// back to false).
public struct ChatViewport: Hashable, Sendable {
    /// A row on screen and where its top edge is, in points from the top of
    /// the visible area (negative when it is cut off above).
    public struct VisibleRow: Hashable, Sendable {
        public var id: ChatRowID
        public var top: Double

        public init(id: ChatRowID, top: Double) {
            self.id = id
            self.top = top
        }
    }

    /// The rows on screen, top to bottom.
    public var visibleRows: [VisibleRow]
    /// How much content lies below the bottom of the visible area, in
    /// points (0 at the very bottom).
    public var distanceFromBottom: Double
    /// The visible area's height.
    public var height: Double

    public init(visibleRows: [VisibleRow], distanceFromBottom: Double, height: Double) {
        self.visibleRows = visibleRows
        self.distanceFromBottom = Swift.max(0, distanceFromBottom)
        self.height = height
    }
}

/// Where the view must scroll after a change, decided by the model: the
/// view performs each command once, in the same update that shows the new
/// rows (a command a frame late is a visible jump).
public struct ChatScrollCommand: Hashable, Sendable {
    public enum Action: Hashable, Sendable {
        /// Leave the scroll position alone.
        case none
        /// Put the top of row `id` at `top` points from the top of the
        /// visible area: the row being read stays where it was (a prepend,
        /// a trim, an edit above it), or a jump's target comes into view.
        case keep(ChatRowID, top: Double)
        /// Show the end of the content (in a top-aligned layout a short chat
        /// stays at the top: the offset clamps to zero).
        case scrollToBottom
    }

    /// Grows with every command: the view performs a command whose serial
    /// it has not performed yet (`onChange(of: model.scroll.serial)`).
    public var serial: Int
    public var action: Action

    public init(serial: Int = 0, action: Action = .none) {
        self.serial = serial
        self.action = action
    }
}
