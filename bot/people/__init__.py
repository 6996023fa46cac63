"""What each person chooses for themselves: preferences, and the tool that sets them."""
