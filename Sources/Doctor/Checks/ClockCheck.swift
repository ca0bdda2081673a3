// The doctor's "clock" check (see DoctorCheckID). Not written yet: it answers skipped and says so,
// so a run shows every row while the checks land one by one.

/// Not written yet; answers skipped.
struct ClockCheck: DoctorCheck {
    let id = DoctorCheckID.clock

    func run(_ context: DoctorContext) async -> DoctorFinding {
        DoctorFinding(check: id, status: .skipped, seen: "This check is not written yet.")
    }
}
