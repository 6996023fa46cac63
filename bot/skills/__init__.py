"""Skills: folders of instructions the operator writes for particular tasks"""
