import HistoryClient
import SwiftUI

/// The screen: the model's rows in a top-aligned list (a short chat stays at
/// the top; "open at the bottom" is the model's first command), the model's
/// scroll commands performed once each, the viewport reported after every
/// scroll, a composer that tells the others this user is typing, and a
/// "jump to latest" button with its count.
struct ChatScreenView: View {
    @State var model: ChatScreenModel
    /// Where the inbox row says the user stopped reading: the screen opens
    /// there, below a "new messages" divider; nil opens at the bottom.
    var firstUnreadID: Int64?
    @State private var position = ScrollPosition(idType: ChatRowID.self)
    @State private var draft = ""
    @State private var layout = RowLayout()
    @Environment(\.scenePhase) private var scenePhase

    var body: some View {
        VStack(spacing: 0) {
            ZStack(alignment: .bottomTrailing) {
                messages
                if model.showsJumpToLatest {
                    JumpToLatestButton(count: model.newMessageCount) { model.jumpToLatest() }
                        .padding()
                }
            }
            if let error = model.lastError {
                Text(error).font(.footnote).foregroundStyle(.red).padding(4)
            }
            Composer(draft: $draft) {
                model.send(draft)
                draft = ""
            }
            // The others see "typing…" while the draft changes; the model keeps the 2 s rule.
            .onChange(of: draft) { _, text in model.setTyping(!text.isEmpty) }
        }
        .task { model.open(atFirstUnread: firstUnreadID) }
        .onDisappear { model.close() }
        .onChange(of: scenePhase) { _, phase in
            if phase == .active { model.resume() } else { model.suspend() }
        }
    }

    private var messages: some View {
        ScrollView {
            LazyVStack(alignment: .leading, spacing: 0) {
                ForEach(model.rows) { row in
                    RowView(row: row, onRetry: model.retry(clientID:), onReplyTap: model.jump(to:))
                        .id(row.id)
                        .onGeometryChange(for: CGRect.self) { $0.frame(in: .scrollView) } action: { frame in
                            layout.frames[row.id] = frame
                        }
                }
            }
            .scrollTargetLayout()
        }
        .scrollPosition($position)
        .onScrollGeometryChange(for: ScrollGeometry.self) { $0 } action: { _, geometry in
            model.viewportDidChange(layout.viewport(rows: model.rows.map(\.id), geometry: geometry))
        }
        // The command comes with the rows it belongs to; performed without
        // animation in the same update, so a prepend never shows a jump.
        .onChange(of: model.scroll, initial: true) { _, command in
            var transaction = Transaction(animation: nil)
            transaction.scrollPositionUpdatePreservesVelocity = true
            withTransaction(transaction) { perform(command.action) }
        }
    }

    private func perform(_ action: ChatScrollCommand.Action) {
        switch action {
        case .none:
            break
        case .keep(let id, let top):
            // The row's top at `top` points from the top: the anchor that
            // puts it there is top / (viewport height - row height).
            let rowHeight = layout.frames[id]?.height ?? 0
            let free = max(layout.viewportHeight - rowHeight, 1)
            position.scrollTo(id: id, anchor: UnitPoint(x: 0, y: min(max(top / free, 0), 1)))
        case .scrollToBottom:
            position.scrollTo(edge: .bottom)
        }
    }
}

/// Row frames as the list last laid them out, in the scroll view's visible
/// coordinates (y = 0 at the top of the screen). Not observed: reading it
/// must not redraw the list.
final class RowLayout {
    var frames: [ChatRowID: CGRect] = [:]
    var viewportHeight: Double = 0

    /// The facts the model wants: rows on screen with their tops, and the
    /// content below the screen.
    func viewport(rows: [ChatRowID], geometry: ScrollGeometry) -> ChatViewport {
        viewportHeight = geometry.visibleRect.height
        let visible = rows.compactMap { id -> ChatViewport.VisibleRow? in
            guard let frame = frames[id], frame.maxY > 0, frame.minY < viewportHeight else { return nil }
            return ChatViewport.VisibleRow(id: id, top: frame.minY)
        }
        let below = geometry.contentSize.height - geometry.visibleRect.maxY
        return ChatViewport(visibleRows: visible, distanceFromBottom: below, height: viewportHeight)
    }
}
