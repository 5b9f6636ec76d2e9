"""placeholder replaced below"""
class PolicyReport: pass
def check_policy(*a, **k): raise NotImplementedError
