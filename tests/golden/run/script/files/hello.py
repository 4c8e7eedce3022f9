print("python says", 6 * 7)
